lengen: error: sweep: File does not exist: swl.json (see lengen sweep --help)
