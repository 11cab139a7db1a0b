from planlineage.main import main

raise SystemExit(main())
