"""A deliberately broken mscore plugin: importing it aborts the process, as a native library
that crashes at load would. Programs that do not select ``test_abort`` must not notice it."""
import os

os.abort()
