

def test_split_half_is_the_function_whatever_was_imported_first():
    """The package re-exports lazily: importing the split_half module first must not make
    ``from annokit.subsample import split_half`` the module (it is the function)."""
    import subprocess
    import sys

    code = ("import importlib\n"
            "m = importlib.import_module('annokit.subsample.split_half')\n"
            "from annokit.subsample.split_half import SplitHalf\n"
            "from annokit.subsample import split_half\n"
            "print(callable(split_half), split_half is m.split_half)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"]
