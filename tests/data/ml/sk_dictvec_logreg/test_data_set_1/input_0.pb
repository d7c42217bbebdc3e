
features"weight"age"height"score"unseen*4JvY¾JcY¿J(v¿J_Gö?JLãV?