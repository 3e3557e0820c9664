#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into fuzz/corpus/<target>/ (standard library only).

The seeds are a few valid inputs and edge cases per target, in each target's input encoding
(documented at the top of fuzz/fuzz_<target>.cpp). They are small and checked in; run this
script again after changing an encoding. Inputs found while fuzzing are NOT added here
(scripts/fuzz.sh keeps them in build/fuzz/corpus/); a crash becomes a regression test in
tests/cpp/fuzz_regressions_test.cpp, and its input is kept as fuzz/corpus/<target>/regression-*
(this script leaves those alone).
"""
import json
import os
import struct
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def u8(v): return struct.pack("<B", v & 0xFF)
def u16(v): return struct.pack("<H", v & 0xFFFF)
def u32(v): return struct.pack("<I", v & 0xFFFFFFFF)
def i64(v): return struct.pack("<q", v)
def u64(v): return struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)


def dim(d):
    """Reader::dim: 0..15 in one byte, anything else as 0x80 + int64."""
    return u8(d) if 0 <= d < 16 else u8(0x80) + i64(d)


def stride(s):
    """Reader::stride: -16..15 in one byte, anything else as 0x80 + int64."""
    return u8(s + 16) if -16 <= s < 16 else u8(0x80) + i64(s)


# ---- fuzz_dlpack -----------------------------------------------------------------------------
# code bits lanes(u16) dev ndim flags shape.. strides.. pos(u32) [address(u64) when pos >= 2**31]
# byte_offset(u16|u64) asked rest
DL = {"int": 0, "uint": 1, "float": 2, "bfloat": 4, "complex": 5, "bool": 6}


def dlpack(code, bits, shape, strides=None, lanes=1, dev=0, pos=0, byte_offset=0, readonly=False,
           copy=0, asked=None, null_data=False, null_shape=False, data=b"", ndim=None, huge_offset=False,
           address=None):
    flags = (1 if strides is None else 0) | (2 if null_data else 0) | (4 if readonly else 0)
    flags |= (copy % 3) << 3 | (0x20 if asked is not None else 0) | (0x40 if huge_offset else 0)
    flags |= 0x80 if null_shape else 0
    nd = len(shape) if ndim is None else ndim
    out = u8(DL.get(code, code)) + u8(bits) + u16(lanes) + u8(dev) + u8(nd) + u8(flags)
    out += b"".join(dim(d) for d in shape)
    out += b"".join(stride(s) for s in (strides or [0] * len(shape)))
    out += u32(pos | 0x80000000) + u64(address) if address is not None else u32(pos)
    out += (u64(byte_offset) if huge_offset else u16(byte_offset)) + u8(asked or 0)
    return out + data


def dlpack_seeds():
    b48 = bytes(range(48))
    return {
        "f32_2x3_c": dlpack("float", 32, [2, 3], data=b48[:24]),
        "f32_2x3_strided": dlpack("float", 32, [2, 3], [3, 1], data=b48[:24]),
        "f32_3x2_transposed": dlpack("float", 32, [3, 2], [1, 3], data=b48[:24]),
        "i16_reversed": dlpack("int", 16, [4], [-1], pos=6, data=b48[:8]),
        "i8_zero_stride": dlpack("int", 8, [5, 3], [0, 1], data=b48[:3]),
        "f64_byte_offset": dlpack("float", 64, [2], byte_offset=8, data=b48[:24], copy=1),
        "u8_unaligned_bool": dlpack("bool", 8, [7], [2], pos=1, data=b48[:16], readonly=True),
        # bool bytes other than 0/1 (a uint8 buffer seen as bool): shared, copied, converted
        "bool_bytes": dlpack("bool", 8, [2, 3], data=bytes([2, 0x80, 1, 0, 0xFF, 0])),
        "bool_bytes_never_strided": dlpack("bool", 8, [3], [-2], pos=4, copy=1, data=bytes([0x40, 0, 2, 9, 0, 7])),
        "bool_bytes_to_f32": dlpack("bool", 8, [4], asked=11, copy=2, data=bytes([0, 0xFE, 1, 0x80])),
        "bf16": dlpack("bfloat", 16, [3], data=b48[:6]),
        "c128": dlpack("complex", 128, [1, 1], data=b48[:16], copy=2),
        "size0_null_data": dlpack("float", 32, [0, 5], null_data=True),
        "size0_huge_dims": dlpack("float", 32, [0, 1 << 40, 1 << 40], null_data=True),
        "zero_d": dlpack("uint", 64, [], data=b48[:8]),
        "lanes2": dlpack("float", 32, [2], lanes=2, data=b48[:16]),
        "subbyte": dlpack("int", 4, [2], data=b48[:1]),
        "cuda": dlpack("float", 32, [2], dev=2, data=b48[:8]),
        "null_shape": dlpack("float", 32, [2], null_shape=True, data=b48[:8]),
        "huge_stride": dlpack("float", 32, [2, 2], [1 << 61, 1], data=b48[:16]),
        "huge_offset": dlpack("float", 32, [1], byte_offset=(1 << 63) + 5, huge_offset=True, data=b48[:8]),
        "offset_past_int64": dlpack("float", 64, [2], byte_offset=(1 << 63) - 1, huge_offset=True,
                                    address=0x7f0000001000),
        "offset_wraps_to_low_address": dlpack("float", 32, [4], byte_offset=0x2000, huge_offset=True,
                                              address=(1 << 64) - 0x1000),
        "strides_below_zero": dlpack("int", 16, [3], [-4], address=0x8),
        "strides_past_2_63": dlpack("uint", 8, [2, 2], [1 << 40, 1], address=(1 << 63) - (1 << 40)),
        "convert_i32_f64": dlpack("int", 32, [2, 2], asked=12, data=b48[:16]),
        "ndim_70": dlpack("float", 32, [1] * 70, data=b48[:4]),
    }


# ---- fuzz_descriptor ---------------------------------------------------------------------------
# mode fmt(len+bytes) flags ndim shape.. strides.. num(u16|i64) pos(u32) copy asked isz rest


def descriptor(mode, fmt, shape, strides=None, num=0, pos=0, copy=0, asked=None, itemsize=1,
               readonly=False, null_shape=False, suboffsets=False, null_format=False, lying_len=False,
               raw_num=False, raw_itemsize=False, v2_bf16=False, data=b""):
    fmt = fmt.encode() if isinstance(fmt, str) else fmt
    flags = (1 if strides is None else 0) | (2 if null_shape else 0) | (4 if readonly else 0)
    flags |= (8 if (suboffsets or v2_bf16) else 0) | (0x10 if null_format else 0) | (0x20 if lying_len else 0)
    flags |= (0x40 if raw_itemsize else 0) | (0x80 if raw_num else 0)
    out = u8(mode) + u8(len(fmt)) + fmt + u8(flags) + u8(len(shape))
    out += b"".join(dim(d) for d in shape)
    out += b"".join(stride(s) for s in (strides or [0] * len(shape)))
    out += (i64(num) if raw_num else u16(num)) + u32(pos) + u8(copy)
    out += u8(0x80 | asked) if asked is not None else u8(0)
    return out + u8(itemsize) + data


def descriptor_seeds():
    b64 = bytes(range(64))
    return {
        # __array_interface__ with buffer data (mode 1)
        "iface_f4_2x3": descriptor(1, "<f4", [2, 3], data=b64[:24]),
        "iface_i8_strided": descriptor(1, "<i8", [2, 2], [-16, 8], num=16, data=b64[:32]),
        "iface_offset_past_end": descriptor(1, "|u1", [4], num=70, data=b64[:8]),
        "iface_big_endian": descriptor(1, ">i2", [3], num=1, data=b64[:8]),
        "iface_bf16": descriptor(1, "<V2", [2], v2_bf16=True, data=b64[:4]),
        "iface_bad_typestr": descriptor(1, "<x9", [2], data=b64[:4]),
        "iface_reaches_out": descriptor(1, "<f8", [3], [15], data=b64[:40]),
        "iface_size0": descriptor(1, "<c16", [0, 1 << 50], data=b""),
        "iface_0d": descriptor(1, "|b1", [], data=b"\x01"),
        # buffer protocol (mode 0)
        "buf_B": descriptor(0, "B", [8], data=b64[:8]),
        "buf_null_format": descriptor(0, "", [4], null_format=True, data=b64[:4]),
        "buf_d_2x2": descriptor(0, "<d", [2, 2], itemsize=8, data=b64[:32]),
        "buf_Zf": descriptor(0, "Zf", [2], itemsize=8, data=b64[:16]),
        "buf_l_standard": descriptor(0, "=l", [3], itemsize=4, data=b64[:12]),
        "buf_l_native": descriptor(0, "@l", [3], itemsize=8, data=b64[:24]),
        "buf_big_H": descriptor(0, ">H", [2, 3], [2, 4], itemsize=2, copy=2, data=b64[:12]),
        "buf_null_shape": descriptor(0, "h", [1], null_shape=True, itemsize=2, data=b64[:10]),
        "buf_lying_len": descriptor(0, "i", [4], itemsize=4, lying_len=True, data=b64[:16]),
        "buf_suboffsets": descriptor(0, "f", [2], itemsize=4, suboffsets=True, data=b64[:8]),
        "buf_itemsize_mismatch": descriptor(0, "q", [2], itemsize=4, data=b64[:16]),
        "buf_itemsize0": descriptor(0, "x", [2], itemsize=0, data=b64[:16]),
        "buf_neg_stride": descriptor(0, "<i", [3], [-4], pos=8, itemsize=4, data=b64[:12]),
    }


# ---- fuzz_arrow ----------------------------------------------------------------------------------
# fmt(len%5+bytes) sflags length null_count offset nb aflags cb [asked] bitmap_len rest


def afield(v):
    if 0 <= v < 16:
        return u8(v)
    if -8 <= v <= -1:
        return u8(0xA0 + (-v - 1))
    return u8(0xE0) + i64(v)


def arrow(fmt, length, null_count=0, offset=0, n_buffers=2, copy=0, asked=None, bitmap=b"", values=b"",
          sflags=0, aflags=0):
    fmt = fmt.encode()
    nb = {1: 0, 3: 1, 2: 2}.get(n_buffers)
    if nb is None:
        nb = 0xF0 | ((n_buffers + 4) & 7)
    cb = copy | (0x80 if asked is not None else 0)
    out = u8(len(fmt)) + fmt + u8(sflags) + afield(length) + afield(null_count) + afield(offset)
    out += u8(nb) + u8(aflags) + u8(cb) + (u8(asked) if asked is not None else b"")
    return out + u8(len(bitmap)) + bitmap + values


def arrow_seeds():
    v = bytes(range(64))
    return {
        "i32_4": arrow("i", 4, values=v[:16]),
        "f64_offset": arrow("g", 2, offset=3, values=v[:40], copy=1),
        "u8_copy": arrow("C", 5, values=v[:5], copy=2),
        "bool_bits": arrow("b", 10, offset=3, values=b"\xff\x0f"),
        "bool_never": arrow("b", 3, values=b"\x05", copy=1),
        "nulls_counted": arrow("s", 4, null_count=1, bitmap=b"\x0e", values=v[:8]),
        "nulls_unknown": arrow("l", 9, null_count=-1, bitmap=b"\xff\x00", values=v[:72]),
        "nulls_unknown_valid": arrow("e", 3, null_count=-1, bitmap=b"\x07", values=v[:6]),
        "empty": arrow("f", 0, values=b""),
        "string": arrow("u", 2, n_buffers=3, values=v[:16]),
        "dict_schema": arrow("c", 2, values=v[:2], sflags=4),
        "released_schema": arrow("i", 1, values=v[:4], sflags=8),
        "released_array": arrow("i", 1, values=v[:4], aflags=4),
        "one_buffer": arrow("i", 1, n_buffers=1, values=v[:4]),
        "neg_length": arrow("I", -3, values=v[:4]),
        "huge_offset": arrow("L", 1, offset=(1 << 62), values=v[:8]),
        "null_values": arrow("S", 2, values=v[:4], aflags=32),
        "null_buffers": arrow("S", 2, values=v[:4], aflags=8),
        "convert": arrow("i", 2, values=v[:8], asked=12),
    }


# ---- fuzz_npy: whole .npy files ------------------------------------------------------------------


def npy(descr, shape, fortran=False, data=b"", version=(1, 0), header=None):
    if header is None:
        shp = "(" + "".join(f"{d}, " for d in shape)[:-2] + ("," if len(shape) == 1 else "") + ")"
        header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, "True" if fortran else "False", shp)
    pre = 10 if version[0] == 1 else 12
    h = header.encode("latin1")
    pad = 64 - (pre + len(h) + 1) % 64
    h = h + b" " * (pad % 64) + b"\n"
    ln = u16(len(h)) if version[0] == 1 else u32(len(h))
    return b"\x93NUMPY" + bytes(version) + ln + h + data


def npy_seeds():
    d = bytes(range(48))
    return {
        "f8_2x3": npy("<f8", [2, 3], data=bytes(48)),
        "i4_fortran": npy("<i4", [2, 3], fortran=True, data=d[:24]),
        "i2_big_endian": npy(">i2", [3], data=d[:6]),
        "b1": npy("|b1", [4], data=b"\x00\x01\x01\x00"),
        "b1_bad_byte": npy("|b1", [2], data=b"\x00\x02"),
        "u1_0d": npy("|u1", [], data=b"\x07"),
        "c16_empty": npy("<c16", [0, 3]),
        "f2_v2": npy("<f2", [2], data=d[:4], version=(2, 0)),
        "v3": npy("<u8", [1], data=d[:8], version=(3, 0)),
        "truncated": npy("<f4", [4], data=d[:8]),
        "huge_shape": npy("<f8", [0, 1 << 62, 1 << 62]),
        "str_dtype": npy("<U3", [1], data=d[:12]),
        "record": npy("", [], header="{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,), }", data=d[:4]),
        "bad_magic": b"\x93NUMPZ\x01\x00" + d[:8],
    }


# ---- fuzz_safetensors: whole files ---------------------------------------------------------------


def safetensors(tensors, metadata=None, data=b"", raw_header=None):
    if raw_header is None:
        obj = {}
        if metadata is not None:
            obj["__metadata__"] = metadata
        for name, (dt, shape, off) in tensors.items():
            obj[name] = {"dtype": dt, "shape": shape, "data_offsets": off}
        raw_header = json.dumps(obj, separators=(",", ":")).encode()
    raw_header += b" " * ((8 - len(raw_header) % 8) % 8)
    return u64(len(raw_header)) + raw_header + data


def safetensors_seeds():
    d = bytes(range(64))
    return {
        "two": safetensors({"w": ("F32", [2, 2], [0, 16]), "b": ("I64", [1], [16, 24])}, data=d[:24]),
        "metadata": safetensors({"x": ("U8", [3], [0, 3])}, metadata={"format": "pt", "k": "v"}, data=d[:3]),
        "bf16_f16": safetensors({"a": ("BF16", [2], [0, 4]), "b": ("F16", [1, 2], [4, 8])}, data=d[:8]),
        "bool": safetensors({"m": ("BOOL", [3], [0, 3])}, data=b"\x00\x01\x01"),
        "empty_tensor": safetensors({"e": ("F64", [0, 4], [0, 0]), "s": ("I8", [], [0, 1])}, data=b"\x05"),
        "empty_header": safetensors({}),
        "null_metadata": safetensors({}, raw_header=b'{"__metadata__":null}'),
        "unicode_name": safetensors({"\u00e9\u4e2d\U0001f600": ("U16", [1], [0, 2])}, data=d[:2]),
        "escaped_name": safetensors({}, raw_header=b'{"a\\n\\u00e9\\ud83d\\ude00":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}}', data=d[:4]),
        "fp8": safetensors({"f": ("F8_E4M3", [2], [0, 2])}, data=d[:2]),
        "gap": safetensors({"a": ("U8", [1], [1, 2])}, data=d[:2]),
        "overflow_shape": safetensors({"a": ("F32", [0, 1 << 62, 1 << 62], [0, 0])}),
        "unaligned": safetensors({"a": ("U8", [1], [0, 1]), "b": ("I32", [1], [1, 5])}, data=d[:5]),
        "c64": safetensors({"z": ("C64", [1], [0, 8])}, data=d[:8]),
    }


# ---- fuzz_shapes: programs -----------------------------------------------------------------------
# dtype nd dims.. then ops: op byte + operands (see fuzz_shapes.cpp)


def shape_arg(shape):
    return u8(len(shape)) + b"".join(dim(d) for d in shape)


def item(kind, *vals):
    """kind: 'int', 'slice', 'new', 'ell'; vals: None or small ints (-8..7) or 'min'/'max'/'min1'."""
    def val(v):
        if v is None:
            return u8(0)
        if v == "min":
            return u8(0xC0)
        if v == "max":
            return u8(0xC1)
        if v == "min1":
            return u8(0xC2)
        if isinstance(v, int) and -8 <= v <= 7:
            return u8(0x40 + v + 8)
        return u8(0xC3) + i64(v)
    k = {"int": 0, "slice": 2, "new": 4, "ell": 5}[kind]
    return u8(k) + b"".join(val(v) for v in vals)


def getitem(*items):
    return u8(3) + u8(len(items)) + b"".join(items)


def shapes_seeds():
    return {
        "reshape": u8(11) + u8(2) + u8(2) + u8(3) + u8(2) + shape_arg([3, 2]) + u8(2) + shape_arg([6, 0x7F - 0x7F + 1]),
        "reshape_unknown": u8(3) + u8(2) + u8(4) + u8(3) + u8(2) + shape_arg([-1, 2, 3]),
        "slices": u8(12) + u8(2) + u8(5) + u8(4)
        + getitem(item("slice", 1, None, 2), item("slice", None, None, -1)),
        "slice_extremes": u8(4) + u8(1) + u8(5)
        + getitem(item("slice", "min", "max", "max")) + getitem(item("slice", "max", "min", "min1")),
        "slice_step_min": u8(4) + u8(1) + u8(5) + getitem(item("slice", None, None, "min")),
        "index_new_ell": u8(3) + u8(3) + u8(2) + u8(3) + u8(4)
        + getitem(item("int", -1), item("new"), item("ell"), item("slice", 0, 1, None)),
        "transpose": u8(1) + u8(3) + u8(2) + u8(3) + u8(4) + u8(4) + u8(3) + stride(2) + stride(0) + stride(-2),
        "broadcast_to": u8(11) + u8(2) + u8(1) + u8(3) + u8(5) + shape_arg([4, 2, 3]) + u8(7) + u8(2) + u8(1) + u8(3),
        "broadcast_huge": u8(0) + u8(1) + u8(0) + u8(5) + shape_arg([1 << 62, 1 << 62, 0]),
        "broadcast_shapes": u8(0) + u8(0) + u8(0) + shape_arg([3, 1, 1 << 40]) + shape_arg([5, 1]),
        "checked_size_over": u8(1) + u8(0) + u8(1) + shape_arg([1 << 32, 1 << 32]),
        "checked_size_zero": u8(1) + u8(0) + u8(1) + shape_arg([0, 1 << 62, 1 << 62]),
        "reshape_zero_huge": u8(5) + u8(1) + u8(0) + u8(2) + shape_arg([0, 1 << 62, 1 << 62]),
        "expand_squeeze": u8(6) + u8(2) + u8(1) + u8(4) + u8(6) + stride(-1) + u8(1) + u8(6) + stride(0) + u8(0)
        + u8(1) + stride(-1),
        "copy_then_slice": u8(13) + u8(1) + u8(5) + getitem(item("slice", None, None, 2)) + u8(9)
        + getitem(item("slice", None, None, -2)),
    }


TARGETS = {
    "fuzz_dlpack": dlpack_seeds,
    "fuzz_descriptor": descriptor_seeds,
    "fuzz_arrow": arrow_seeds,
    "fuzz_npy": npy_seeds,
    "fuzz_safetensors": safetensors_seeds,
    "fuzz_shapes": shapes_seeds,
}


def main():
    for target, make in TARGETS.items():
        d = os.path.join(ROOT, target)
        os.makedirs(d, exist_ok=True)
        for old in os.listdir(d):  # regression-* inputs (crashes found by fuzzing) stay
            if not old.startswith("regression-"):
                os.remove(os.path.join(d, old))
        for name, blob in make().items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(blob)
        print(f"{target}: {len(os.listdir(d))} seeds", file=sys.stderr)


if __name__ == "__main__":
    main()
