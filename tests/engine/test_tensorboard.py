"""torch.utils.tensorboard's SummaryWriter on the engine writes TensorBoard's event files
itself: the TFRecord framing with its CRC-32C checks, and the Event and Summary messages read
back by a protobuf reader written here from the wire format (the comparison of the bytes with
torch's own writer is tests/parity/test_tensorboard.py)."""
import glob
import os
import struct

import numpy as np
import pytest

import gradtool as gt
from gradtool.engine.errors import NotInEngineError
from gradtool.engine.utils import tensorboard


def test_crc32c_is_castagnolis():
    assert tensorboard.crc32c(b"123456789") == 0xE3069283  # the check value of CRC-32C
    assert tensorboard.crc32c(b"") == 0


def read_records(path):
    data, records = open(path, "rb").read(), []
    while data:
        length_bytes = data[:8]
        (length,) = struct.unpack("<Q", length_bytes)
        assert data[8:12] == tensorboard._masked_crc(length_bytes)
        records.append(data[12:12 + length])
        assert data[12 + length:16 + length] == tensorboard._masked_crc(records[-1])
        data = data[16 + length:]
    return records


def fields(message):
    """{field number: [values]} of one protobuf message (varints, fixed64 as double, fixed32
    as float, length-delimited as bytes)."""
    out, i = {}, 0
    while i < len(message):
        key, i = varint(message, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(message, i)
        elif wire == 1:
            value, i = struct.unpack("<d", message[i:i + 8])[0], i + 8
        elif wire == 5:
            value, i = struct.unpack("<f", message[i:i + 4])[0], i + 4
        else:
            length, i = varint(message, i)
            value, i = message[i:i + length], i + length
        out.setdefault(number, []).append(value)
    return out


def varint(data, i):
    value = shift = 0
    while True:
        byte = data[i]
        value, shift, i = value | (byte & 0x7F) << shift, shift + 7, i + 1
        if not byte & 0x80:
            return value, i


def test_scalars_histograms_and_text_are_events_tensorboard_reads(tmp_path):
    with gt.utils.tensorboard.SummaryWriter(str(tmp_path / "run")) as writer:
        writer.add_scalar("loss", gt.tensor(0.25), global_step=3, walltime=100.0)
        writer.add_scalar("zero", 0.0, 4, walltime=101.0)
        writer.add_histogram("w", np.arange(10.0), 5, bins=4, walltime=102.0)
        writer.add_text("note", "héllo", 6, walltime=103.0)
        writer.add_scalars("group", {"a": 1.0, "b": 2.0}, 7, walltime=104.0)
    main, = glob.glob(str(tmp_path / "run" / "events.out.tfevents.*"))
    first, loss, zero, histo, text = map(fields, read_records(main))
    assert first[3] == [b"brain.Event:2"]
    assert loss[1] == [100.0] and loss[2] == [3]
    value = fields(fields(loss[5][0])[1][0])
    assert value == {1: [b"loss"], 2: [0.25]}
    assert fields(fields(zero[5][0])[1][0]) == {1: [b"zero"], 2: [0.0]}  # said, in its oneof
    histogram = fields(fields(fields(histo[5][0])[1][0])[5][0])
    counts, limits = np.histogram(np.arange(10.0), bins=4)
    assert histogram[2] == [9.0] and histogram[3] == [10.0] and histogram[4] == [45.0]
    assert histogram[5] == [285.0] and 1 not in histogram  # min 0: unsaid
    assert struct.unpack("<5d", histogram[6][0]) == tuple(limits)
    assert struct.unpack("<5d", histogram[7][0]) == (0.0,) + tuple(counts)
    text_value = fields(fields(text[5][0])[1][0])
    assert text_value[1] == [b"note/text_summary"]
    assert fields(text_value[8][0])[8] == ["héllo".encode()]
    assert fields(fields(text_value[9][0])[1][0]) == {1: [b"text"]}
    for tag, number in (("a", 1.0), ("b", 2.0)):
        events = read_records(glob.glob(str(tmp_path / "run" / f"group_{tag}" / "events*"))[0])
        assert fields(fields(fields(events[1])[5][0])[1][0]) == {1: [b"group"], 2: [number]}


def test_the_default_run_folder_and_what_is_not_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    writer = gt.utils.tensorboard.SummaryWriter(comment="_lr0.1")
    assert writer.get_logdir().startswith("runs" + os.sep)
    assert writer.get_logdir().endswith("_lr0.1") and os.path.isdir(writer.get_logdir())
    with pytest.raises(NotInEngineError, match="SummaryWriter.add_image"):
        writer.add_image("img", gt.zeros(3, 2, 2))
    assert not hasattr(writer, "add_graph")
    with pytest.raises(AssertionError, match="one element"):
        writer.add_scalar("bad", gt.ones(2))
    writer.close()
