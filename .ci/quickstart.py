"""Print the commands of the README's quick start, one per line (used by .ci/run and a test)."""

import re
import sys
from pathlib import Path


def quickstart_commands(readme: str) -> list[str]:
    section = re.search(r"^## Quick start\n(.*?)(?=^## )", readme, flags=re.S | re.M)
    if section is None:
        raise SystemExit("README has no '## Quick start' section")
    block = re.search(r"```bash\n(.*?)```", section.group(1), flags=re.S)
    if block is None:
        raise SystemExit("README quick start has no ```bash block")
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


if __name__ == "__main__":
    for command in quickstart_commands(Path(sys.argv[1]).read_text(encoding="utf-8")):
        print(command)
