
features"score"weight"height* J¬ƒ¾J…†â¿Jë8A>