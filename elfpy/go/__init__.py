"""Go on the engine: the rules game ``go`` and the self-play search game
``go_mcts`` live in C++ (``cpp/games/go``); this package holds what Python
adds around them: the cross-check against OpenSpiel's rules
(``elfpy.go.openspiel``), SGF records (``elfpy.go.sgf``), GTP
(``elfpy.gtp``) and its clocks (``elfpy.go.clock``), and GNU Go as an opponent over GTP (``elfpy.go.gnugo``)."""
