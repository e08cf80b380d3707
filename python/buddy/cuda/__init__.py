# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.cuda - what Buddy Compression would give a PyTorch program's GPU
memory: snapshots of the CUDA caching allocator at the start of backward,
every block copied to host and sized with the project's codecs.

    python3 -m buddy.cuda run -o DIR -- python3 train.py ...

runs the program unmodified (a sitecustomize on PYTHONPATH loads the hook
into every Python process it starts) and leaves one record file per
process in DIR (records.py gives the format), which `buddyctl profile`
turns into its report; `python3 -m buddy.cuda summary DIR` prints what
the records say per snapshot.  Documentation/dnn.rst, "GPU memory".

  snapshot.py  torch.cuda.memory_snapshot() of torch 1.13 and 2.x parsed
               into segments and blocks, each block labelled
  schedule.py  when: the progress schedule of buddyctl profile, on
               backward passes
  staging.py   the copy plan (large pieces, never across two segments)
               and the copy/size pipeline
  records.py   the record file: writer, reader, summary
  hook.py      the hook in the program (torch glue)

Everything but hook.py works without torch and without a GPU.
"""
