"""torch.utils.tensorboard's SummaryWriter, writing TensorBoard's event files itself: torch's
writer needs the tensorboard package (and its protobuf classes); this one encodes the few
messages it writes by hand, field by field as protobuf serialises them, in the TFRecord
framing TensorBoard reads (length, masked CRC-32C of the length, the record, masked CRC-32C
of the record). Scalars, groups of scalars, histograms and text are written as torch's
writer writes them; what needs an image or audio encoder, a graph tracer or a projector
(add_image, add_graph, add_embedding, ...) is a name the engine lacks."""
import os
import socket
import struct
import time
from datetime import datetime

import numpy as np

from ..errors import NotInEngineAttributeError, NotInEngineError


# ---- protobuf's wire format: a field is a key (number << 3 | wire type) then its value
def _varint(n):
    out = bytearray()
    n &= (1 << 64) - 1  # negative int64s are ten bytes of two's complement
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _key(number, wire_type):
    return _varint(number << 3 | wire_type)


def _fixed(number, wire_type, raw, always):
    """proto3 leaves a zero unsaid, except a field of a oneof (the value of a Summary.Value)."""
    return _key(number, wire_type) + raw if always or any(raw) else b""


def _double(number, value, always=False):
    return _fixed(number, 1, struct.pack("<d", value), always)


def _float(number, value, always=False):
    return _fixed(number, 5, struct.pack("<f", value), always)


def _int(number, value):
    return _key(number, 0) + _varint(int(value)) if value else b""


def _bytes(number, value):
    if isinstance(value, str):
        value = value.encode("utf-8")
    return _key(number, 2) + _varint(len(value)) + value if value else b""


def _packed_doubles(number, values):
    return _bytes(number, struct.pack(f"<{len(values)}d", *values))


# ---- CRC-32C (Castagnoli), as the TFRecord framing checks it
def _crc32c_table():
    table = []
    for n in range(256):
        for _ in range(8):
            n = (n >> 1) ^ 0x82F63B78 if n & 1 else n >> 1
        table.append(n)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked_crc(data):
    crc = crc32c(data)
    return struct.pack("<I", (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF)


def record(data):
    """One TFRecord: the framing TensorBoard's reader checks."""
    length = struct.pack("<Q", len(data))
    return length + _masked_crc(length) + data + _masked_crc(data)


# ---- the messages: Event{wall_time 1, step 2, file_version 3, summary 5},
# SessionLog{status 1}, Summary{value 1}, Summary.Value{tag 1, simple_value 2, histo 5, tensor 8, metadata 9}
def event(wall_time, step=None, file_version=None, summary=None, session_log=None):
    return (_double(1, wall_time) + _int(2, step or 0) + _bytes(3, file_version or b"") +
            _bytes(5, summary or b"") + _bytes(7, session_log or b""))


SESSION_START = _int(1, 1)


def scalar_summary(tag, value):
    value = np.asarray(value.detach().numpy() if hasattr(value, "detach") else value).squeeze()
    if value.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). "
                             f"Was given size: {value.size} and {value.ndim} dimensions.")
    return _bytes(1, _bytes(1, tag) + _float(2, float(value), always=True))


def histogram_summary(tag, values, bins, max_bins=None):
    """HistogramProto{min 1, max 2, num 3, sum 4, sum_squares 5, bucket_limit 6, bucket 7}
    from the values binned as torch's writer bins them (TensorBoard's default bins, the
    empty ones at either end dropped)."""
    values = np.asarray(values.detach().numpy() if hasattr(values, "detach") else values,
                        dtype=float).reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        step = len(counts) // max_bins
        counts = np.pad(counts, [[0, (step - len(counts) % step) % step]])
        counts = counts.reshape(-1, step).sum(axis=-1)
        limits = np.append(limits[:-1:step][:counts.size], limits[-1])
    cumulative = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cumulative, [0, cumulative[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    histo = (_double(1, values.min()) + _double(2, values.max()) + _double(3, len(values)) +
             _double(4, values.sum()) + _double(5, values.dot(values)) +
             _packed_doubles(6, limits.tolist()) + _packed_doubles(7, counts.tolist()))
    return _bytes(1, _bytes(1, tag) + _bytes(5, histo))


def text_summary(tag, text):
    """A string tensor (TensorProto{dtype 1: DT_STRING, tensor_shape 2: [1], string_val 8})
    marked for TensorBoard's text plugin (SummaryMetadata{plugin_data 1{plugin_name 1}})."""
    tensor = _int(1, 7) + _bytes(2, _bytes(2, _int(1, 1))) + _bytes(8, text)
    metadata = _bytes(1, _bytes(1, "text"))
    return _bytes(1, _bytes(1, tag + "/text_summary") + _bytes(8, tensor) + _bytes(9, metadata))


def _default_bins():
    """TensorBoard's default histogram bins: +-1e-12 growing by 10% up to 1e20, and 0."""
    v, buckets = 1e-12, []
    while v < 1e20:
        buckets.append(v)
        v *= 1.1
    return [-b for b in reversed(buckets)] + [0] + buckets


_file_count = iter(range(10 ** 9))  # the event files this process made, in their names


class FileWriter:
    """One event file in log_dir, opened with its file_version event."""

    def __init__(self, log_dir, filename_suffix=""):
        os.makedirs(log_dir, exist_ok=True)
        self.log_dir = log_dir
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
                f"{os.getpid()}.{next(_file_count)}{filename_suffix}")
        self.path = os.path.join(log_dir, name)
        self._file = open(self.path, "wb")
        self.add_event(event(time.time(), file_version="brain.Event:2"))

    def get_logdir(self):
        return self.log_dir

    def add_event(self, data):
        if self._file.closed:
            self._file = open(self.path, "ab")
        self._file.write(record(data))

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(event(time.time() if walltime is None else walltime,
                             None if global_step is None else int(global_step),
                             summary=summary))

    def flush(self):
        self._file.flush()

    def close(self):
        self._file.close()


class SummaryWriter:
    """Writes scalars, histograms and text to TensorBoard event files under log_dir (by
    default runs/<date>_<host><comment>, as torch's)."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10,
                 flush_secs=120, filename_suffix=""):
        if not log_dir:
            now = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", now + "_" + socket.gethostname() + comment)
        self.log_dir, self.filename_suffix = str(log_dir), filename_suffix
        self.purge_step, self.max_queue, self.flush_secs = purge_step, max_queue, flush_secs
        self.default_bins = _default_bins()
        self.file_writer = self.all_writers = None
        self._get_file_writer()

    def _get_file_writer(self):
        if self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:  # TensorBoard hides the events from that step on
                self.file_writer.add_event(event(time.time(), self.purge_step,
                                                 file_version="brain.Event:2"))
                self.file_writer.add_event(event(time.time(), self.purge_step,
                                                 session_log=SESSION_START))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        if new_style:
            raise NotInEngineError("SummaryWriter.add_scalar(new_style=True)")
        self._get_file_writer().add_summary(scalar_summary(tag, scalar_value), global_step,
                                            walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Each value in its own run, log_dir/<main_tag>_<tag>, under the tag main_tag, so
        TensorBoard draws them on one chart."""
        walltime = time.time() if walltime is None else walltime
        log_dir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            run = log_dir + "/" + main_tag.replace("/", "_") + "_" + tag
            if run not in self.all_writers:
                self.all_writers[run] = FileWriter(run, self.filename_suffix)
            self.all_writers[run].add_summary(scalar_summary(main_tag, value), global_step,
                                              walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        bins = self.default_bins if isinstance(bins, str) and bins == "tensorflow" else bins
        self._get_file_writer().add_summary(histogram_summary(tag, values, bins, max_bins),
                                            global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._get_file_writer().add_summary(text_summary(tag, text_string), global_step,
                                            walltime)

    def flush(self):
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self):
        for writer in (self.all_writers or {}).values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()

    def __getattr__(self, name):
        if name.startswith("add_"):  # images, audio, graphs, embeddings: not written here
            raise NotInEngineAttributeError(f"torch.utils.tensorboard.SummaryWriter.{name}",
                                            name=name, obj=self)
        raise AttributeError(f"'SummaryWriter' object has no attribute '{name}'")


__all__ = ["FileWriter", "SummaryWriter"]


from ..errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
