"""pytest never collects the mutation runner: it is a script that runs pytest itself."""

collect_ignore_glob = ["*"]
