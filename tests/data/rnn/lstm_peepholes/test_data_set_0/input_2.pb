B	initial_cJ Ød
¾˜Un½¾“'?c¶¾/¢?Äw6¾`>ªT¥>