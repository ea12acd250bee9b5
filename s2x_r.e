lengen: error: dir: Directory does not exist: s2x (see lengen report --help)
