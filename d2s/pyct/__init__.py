"""Generic Python-to-Python tooling for the transpiler (imports nothing from `runtime` or d2s).

- `anno`: annotations stored on AST nodes.
- `origin`: where each node came from in the user's source (file, line, source text).
- `parser`: source of functions, methods and lambdas, parsed with gast.
- `naming`: fresh names that never collide with the user's.
- `templates`: code generated from Python text with placeholders, never hand-built nodes.
- `analysis`: runs the analyses once per function: `activity` (names read and written),
  `definedness`, `liveness` (loop-carried names too), over `walk` and `qnames` (`self.x`).
- `transformer`: the base class converters derive from (keeps origin info on new nodes).
- `loader`: writes generated code to a real file and loads it as a function.
- `hoist`, `generated_names`: generated code as flat as the user's, and generated function
  names reused in a huge scope (so CPython compiles it in linear time).
"""
