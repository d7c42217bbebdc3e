"""Exports the PyTorch models under models/ (lstm_basic, gru_basic and bilstm_seqlens come
from elsewhere) with their PyTorch expected outputs. Deterministic: a re-run rewrites
identical files. Each export is then run through check_exports.py's numpy interpreter, which
must reproduce PyTorch's outputs from the ONNX graph (an exporter bug stops here).

    /usr/bin/python3 tools/models/export_all.py [ROOT]   # ROOT defaults to models/
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import check_exports  # noqa: E402
import common  # noqa: E402
import export_attention_lstm_classifier  # noqa: E402
import export_bigru_classifier  # noqa: E402
import export_char_lstm_lm  # noqa: E402
import export_crnn  # noqa: E402
import export_dynamic_lstm  # noqa: E402
import export_greedy_seq2seq  # noqa: E402
import export_hifigan_vocoder  # noqa: E402
import export_lstm_streaming  # noqa: E402
import export_module_functions  # noqa: E402
import export_packed_bilstm_tagger  # noqa: E402
import export_relu_rnn_stack  # noqa: E402
import export_rnnoise_gru  # noqa: E402
import export_vad_streaming  # noqa: E402

EXPORTERS = [
    export_char_lstm_lm,
    export_bigru_classifier,
    export_crnn,
    export_lstm_streaming,
    export_rnnoise_gru,
    export_relu_rnn_stack,
    export_dynamic_lstm,
    export_packed_bilstm_tagger,
    export_attention_lstm_classifier,
    export_vad_streaming,
    export_module_functions,
    export_greedy_seq2seq,
    export_hifigan_vocoder,
]


def main(root=None):
    total = 0
    for e in EXPORTERS:
        d = e.main(root)
        ok, lines = check_exports.check_dir(d)
        if not ok:
            sys.exit("export check failed:\n" + "\n".join(lines))
        opset, ops, size = common.summary(os.path.join(d, "model.onnx"))
        folder = sum(os.path.getsize(os.path.join(p, f)) for p, _, fs in os.walk(d) for f in fs)
        total += folder
        print("%-20s opset %-2d %7d bytes  %s" % (e.NAME, opset, folder,
                                                 " ".join("%s:%d" % kv for kv in sorted(ops.items()))))
    print("total %d bytes" % total)


if __name__ == "__main__":
    main(*sys.argv[1:])
