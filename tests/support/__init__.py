"""What the tests share: scripted chat models, message builders, store and saver helpers,
deterministic embeddings. Imported as ``tests.support.<module>``; holds no tests."""
