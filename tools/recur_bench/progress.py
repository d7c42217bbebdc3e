"""A one-line progress bar on stderr, drawn only when stderr is a terminal."""
import shutil
import sys
import time


def _clock(seconds):
    seconds = int(max(0, seconds))
    return "%d:%02d" % (seconds // 60, seconds % 60)


class Progress:
    def __init__(self, total, enabled=None, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total = max(1, total)
        self.done = 0
        self.label = ""
        self.start = time.monotonic()
        self.shown = False

    def _line(self):
        width = shutil.get_terminal_size((100, 20)).columns
        frac = min(1.0, self.done / self.total)
        elapsed = time.monotonic() - self.start
        eta = "" if self.done == 0 else " ETA " + _clock(elapsed * (self.total - self.done) /
                                                         self.done)
        head = "%3d%% %d/%d %s%s " % (100 * frac, self.done, self.total, _clock(elapsed), eta)
        bar_w = max(10, min(30, width // 4))
        fill = int(round(bar_w * frac))
        text = "[" + "#" * fill + "-" * (bar_w - fill) + "] " + head + self.label
        return text[:width - 1]

    def _draw(self):
        if not self.enabled:
            return
        self.stream.write("\r\x1b[K" + self._line())
        self.stream.flush()
        self.shown = True

    def update(self, label=None, advance=0):
        if label is not None:
            self.label = label
        self.done += advance
        self._draw()

    def message(self, text):
        """Prints a line above the bar (or plainly when there is no bar)."""
        if self.enabled and self.shown:
            self.stream.write("\r\x1b[K")
        self.stream.write(text + "\n")
        self.stream.flush()
        if self.enabled and self.shown:
            self._draw()

    def close(self):
        if self.enabled and self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
        self.shown = False
