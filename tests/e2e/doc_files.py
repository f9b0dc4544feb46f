"""doc_files.py DOC FILE...: each FILE is quoted in DOC, verbatim, as the fenced block that
follows the line `<!-- file: FILE -->` (docs/sweeps.md quotes the batch-engine recipes that
the e2e suites run, so the documented job is the tested one). Exits 1 naming the first FILE
whose block is missing or differs."""
import re
import sys

doc = open(sys.argv[1]).read()
for name in sys.argv[2:]:
    m = re.search(r"<!-- file: %s -->\n```[^\n]*\n(.*?)^```$" % re.escape(name), doc, re.S | re.M)
    if m is None:
        sys.exit("%s: no block after '<!-- file: %s -->'" % (sys.argv[1], name))
    if m.group(1) != open(name).read():
        sys.exit("%s: the block of %s differs from the file" % (sys.argv[1], name))
