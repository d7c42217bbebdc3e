
features"weight"age"score"unseen**JD
?J¿?{øJføJ€Ã¶?