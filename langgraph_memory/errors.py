"""Every error langgraph-memory raises, in one tree.

Each leaf also subclasses the builtin it refines, so ``except ValueError`` in
user code keeps working. Messages quote the bad value and say the fix.

::

    LangGraphMemoryError(Exception)
    ├── ConfigurationError(ValueError)          bad policy / constructor argument
    │   └── EmbeddingModelMismatchError          store built with another embedding model
    ├── MissingUserIdError(KeyError)             no user id in Runtime context / configurable
    ├── InvalidUserIdError(ValueError)           malformed or crafted user id
    ├── InvalidNamespaceError(ValueError)        namespace outside the store's contract
    ├── InvalidFilterError(ValueError)           a filter key/operator we refuse
    ├── InvalidConnectionError(TypeError)        a connection object we cannot use
    ├── DatabaseConnectionError(ConnectionError) a database we cannot open or reach
    ├── InvalidCheckpointError(ValueError)       a checkpoint / metadata / write a saver refuses
    ├── InputTooLargeError(ValueError)           an id or text above its documented size limit
    ├── InvalidMemoryError(ValueError)           a MemoryRecord field of the wrong type or range
    ├── ThreadDeletedError(RuntimeError)         write to a deleted (tombstoned) thread
    ├── ThreadOwnershipError(PermissionError)    a thread used by a user who does not own it
    ├── DecryptionError(ValueError)              an encrypted row that does not open here
    │   └── PlaintextRowError                    a clear row read with encryption on
    ├── CheckpointStorageError(RuntimeError)     the database refused after retries
    ├── MigrationError(RuntimeError)             a schema migration failed
    ├── RedactionRejectedError(ValueError)       privacy policy says "reject" for this text
    ├── MemoryNotFoundError(KeyError)            no memory with that id for that user
    ├── ModelOutputError(ValueError)             an LLM answer we could not parse/validate
    ├── JobLeaseLostError(RuntimeError)          a memory-queue worker lost its job's lease
    ├── ExamDataError(ValueError)                an exam data file (eval/data) is malformed
    ├── VectorStoreUnavailableError(ConnectionError)  the Chroma server does not answer
    └── MissingExtraError(ImportError)           a layer used without its pip extra installed
"""

from __future__ import annotations


class LangGraphMemoryError(Exception):
    """Base class of every error raised by langgraph-memory."""


class ConfigurationError(LangGraphMemoryError, ValueError):
    """A constructor argument or policy value is out of range."""


class EmbeddingModelMismatchError(ConfigurationError):
    """A store's vectors were made by another embedding model than the one it was opened with.

    Raised even when both models have the same dimension: vectors of two models
    live in unrelated spaces, so comparing them ranks by noise. The message names
    both models and the fixes (the recorded model, ``store.reembed(...)``, or a
    new store). ``recorded`` and ``current`` hold the two
    :class:`~langgraph_memory.longterm.embedding_identity.EmbeddingIdentity` values.
    """

    def __init__(self, message: str, *, recorded: object = None, current: object = None) -> None:
        super().__init__(message)
        self.recorded = recorded
        self.current = current


class MissingUserIdError(LangGraphMemoryError, KeyError):
    """No user id was supplied; memory operations fail closed."""

    def __str__(self) -> str:  # KeyError repr()s its message; keep it readable.
        return str(self.args[0]) if self.args else "missing user id"


class InvalidUserIdError(LangGraphMemoryError, ValueError):
    """A user id is empty, too long, or contains characters we refuse."""


class InvalidNamespaceError(LangGraphMemoryError, ValueError):
    """A store namespace does not follow the store's contract."""


class InvalidFilterError(LangGraphMemoryError, ValueError):
    """A search filter uses a key or operator the store refuses."""


class InvalidConnectionError(LangGraphMemoryError, TypeError):
    """A connection or pool passed in cannot be used as given."""


class DatabaseConnectionError(LangGraphMemoryError, ConnectionError):
    """A database file cannot be opened, or a database server refuses the connection.

    Raised at once, never after retries: the message names the path or the
    server (without its password), the database's own reason, and the fix.
    """


class InvalidCheckpointError(LangGraphMemoryError, ValueError):
    """A checkpoint, its metadata, versions or pending writes are not what a saver stores."""


class InputTooLargeError(LangGraphMemoryError, ValueError):
    """An id or a text is longer than its documented limit (see ``langgraph_memory.limits``)."""


class InvalidMemoryError(LangGraphMemoryError, ValueError):
    """A ``MemoryRecord`` field has the wrong type or is out of range."""


class ThreadOwnershipError(LangGraphMemoryError, PermissionError):
    """A thread that belongs to one user was read or written with another user's id.

    The saver fails closed: nothing is read or stored. Threads with no owner
    (written without a user id) are not affected.
    """


class DecryptionError(LangGraphMemoryError, ValueError):
    """An encrypted row does not open: it was moved or copied to another identity
    (thread, namespace, checkpoint, channel; user and memory id), altered, or
    sealed under a key id the keyring lacks. Fails closed: nothing is returned.

    The message names the row's identity (ids only, never its content) and the
    fix. ``row`` holds that identity as text, ``key_id`` the envelope's key id.
    """

    def __init__(self, message: str, *, row: str = "", key_id: str | None = None) -> None:
        super().__init__(message)
        self.row = row
        self.key_id = key_id


class PlaintextRowError(DecryptionError):
    """A row stored in clear was read by a store or saver opened with ``encryption=``.

    Encrypted storage never falls back to clear rows (an attacker with write
    access could otherwise plant them); ``reencrypt(encrypt_plaintext=True)``
    encrypts the rows written before encryption was turned on.
    """


class ThreadDeletedError(LangGraphMemoryError, RuntimeError):
    """A write targeted a thread that was deleted; deleted threads stay deleted."""


class CheckpointStorageError(LangGraphMemoryError, RuntimeError):
    """The checkpoint database refused an operation after bounded retries."""


class MigrationError(LangGraphMemoryError, RuntimeError):
    """A schema migration could not be applied."""


class RedactionRejectedError(LangGraphMemoryError, ValueError):
    """The privacy policy rejects text containing this kind of identifier."""


class MemoryNotFoundError(LangGraphMemoryError, KeyError):
    """No memory with that id exists for that user."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "memory not found"


class ModelOutputError(LangGraphMemoryError, ValueError):
    """A chat model's answer could not be parsed or validated."""


class JobLeaseLostError(LangGraphMemoryError, RuntimeError):
    """A memory-queue worker no longer holds the lease of the job it was running."""


class ExamDataError(LangGraphMemoryError, ValueError):
    """An exam data file (``langgraph_memory.eval``) is malformed: names the file, field and fix."""


class VectorStoreUnavailableError(LangGraphMemoryError, ConnectionError):
    """The Chroma server (vectors of the long-term store) did not answer; nothing
    was acknowledged, so the caller can retry once it is back."""


class MissingExtraError(LangGraphMemoryError, ImportError):
    """A layer was used without the optional extra that installs its dependency.

    The core install is the checkpointer (``SqliteSaver``, ``AsyncSqliteSaver``);
    Postgres, the Chroma store and OpenAI are extras. The message names the
    feature, the missing module and the pip command; ``extra`` holds the extra's
    name and ``name`` (as on any ``ImportError``) the missing module.
    """

    def __init__(self, feature: str, extra: str, module: str) -> None:
        super().__init__(
            f"{feature} needs the {extra!r} extra ({module} is not installed); "
            f"install it with: pip install 'langgraph-memory[{extra}]'",
            name=module,
        )
        self.feature = feature
        self.extra = extra
