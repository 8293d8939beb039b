"""`cb-async conformance`: the habits of real GUIs that break engines, as checks any engine can run.

    driver      one engine process: lines in and out, every one stamped, the transcript
    registry    the checks as data: protocol, group (the habit and who has it), sentence
    bounds      how long a check waits, from the clients' own timeouts
    moves       legality and notation as python-chess judges them
    uci, xboard a GUI's half of each protocol, lenient where clients are
    uci_checks, xboard_checks    the checks themselves
    runner      a fresh engine per check; PASS, FAIL or SKIP
    report      text (one line per check) and JUnit XML
    command     the `cb-async conformance` command line

The package is named for what it checks, not for the command: the repository's top-level
`conformance/` folder is cb-async's own black-box test suite, which uses this driver.
"""
