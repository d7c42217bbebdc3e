
features"age*JgOû=