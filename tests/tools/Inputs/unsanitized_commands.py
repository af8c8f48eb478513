"""Prints how many compile commands a build has and which lack ASan+UBSan."""
import json
import sys

commands = json.load(open(sys.argv[1]))
bare = [c["file"] for c in commands
        if "-fsanitize=address,undefined" not in c["command"]]
print(len(commands), "compile commands,", len(bare), "without the sanitizers",
      bare[:3])
