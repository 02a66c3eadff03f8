"""Every default prompt, one module per node; override any of them by argument.

``recall`` (the long-term-memory block), ``compress`` (the rolling summary),
``extract`` and ``reconcile`` (structured-output prompts).
"""
