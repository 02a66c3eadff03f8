from langgraph_memory.cli import main

raise SystemExit(main())
