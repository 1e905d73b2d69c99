from pgbench_kb.cli import main

raise SystemExit(main())
