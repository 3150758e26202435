"""A deliberately broken mscore plugin: importing it never returns, as a library waiting on a
lock or an absent device would. Programs that do not select ``test_hang`` must not notice it."""
import threading

threading.Event().wait()
