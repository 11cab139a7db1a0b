from planlineage.cli.main import main

raise SystemExit(main())
