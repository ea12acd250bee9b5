lengen: error: run: Directory does not exist: s2x/seed1 (see lengen eval --help)
