
BYJ<cŠ¨t_¯âZ£›Ü­\XeÏÎ­ÓdaƒXÌ–¶Ø\W’_bY[a`]_¤bÍ¿“ZZ\^_¡baz^nZj\ÙZ