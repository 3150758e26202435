"""Deliberately faulty mscore plugins that import cleanly and fail later, one per module (each
its own entry point, named after the backend it would provide). Programs that do not select
them must not notice them; programs that do must name the cause, in bounded time."""
