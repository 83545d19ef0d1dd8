"""Answers of the real apiextensions-apiserver v0.34.4 CEL code (compile errors, estimated costs, validation
errors) for rules on one schema, recorded by compiling each rule alone with `cel.Compile` and running
`cel.NewValidator(...).Validate` on `OBJECT` (tools used once, not part of the suite; selfTypeN normalised).
"""
# ruff: noqa: E501
SCHEMA = {'properties': {'a': {'type': 'string'},
                'b': {'maxLength': 10, 'type': 'string'},
                'dash-name': {'type': 'string'},
                'dur': {'format': 'duration', 'type': 'string'},
                'f': {'type': 'number'},
                'flag': {'type': 'boolean'},
                'free': {'type': 'object', 'x-kubernetes-preserve-unknown-fields': True},
                'ios': {'x-kubernetes-int-or-string': True},
                'list': {'items': {'type': 'string'}, 'type': 'array'},
                'm': {'additionalProperties': {'type': 'string'}, 'type': 'object'},
                'n': {'type': 'integer'},
                'namespace': {'type': 'string'},
                'nums': {'items': {'type': 'integer'}, 'maxItems': 10, 'type': 'array'},
                'o': {'properties': {'x': {'type': 'integer'}, 'y': {'maxLength': 5, 'type': 'string'}},
                      'type': 'object'},
                'objs': {'items': {'properties': {'k': {'maxLength': 4, 'type': 'string'},
                                                  'v': {'type': 'integer'}},
                                   'type': 'object'},
                         'maxItems': 3,
                         'type': 'array'},
                'sm': {'additionalProperties': {'type': 'integer'}, 'maxProperties': 4, 'type': 'object'},
                'small': {'items': {'maxLength': 8, 'type': 'string'}, 'maxItems': 5, 'type': 'array'},
                'ts': {'format': 'date-time', 'type': 'string'}},
 'type': 'object'}
OBJECT = {'a': 'abc',
 'b': '1',
 'dash-name': 'x',
 'dur': '30m',
 'f': 1.5,
 'flag': True,
 'free': {'x': 1},
 'ios': 1,
 'list': ['a', 'b'],
 'm': {'a': 'b'},
 'n': 1,
 'namespace': 'x',
 'nums': [1, 2, 3],
 'o': {'x': 1, 'y': 'z'},
 'objs': [{'k': 'a', 'v': 1}],
 'sm': {'a': 1},
 'small': ['a', 'b'],
 'ts': '2024-01-01T00:00:00Z'}
ERRORS = [('self.nope == 1', "compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^"),
 ('self.a ==',
  "compilation failed: ERROR: <input>:1:10: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', "
  "'-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
  ' | self.a ==\n'
  ' | .........^'),
 ('self.a', 'cel expression must evaluate to a bool'),
 ("self.a + 1 == 'x'",
  "compilation failed: ERROR: <input>:1:8: found no matching overload for '_+_' applied to '(string, int)'\n"
  " | self.a + 1 == 'x'\n"
  ' | .......^'),
 ('self.a.frob()',
  "compilation failed: ERROR: <input>:1:12: undeclared reference to 'frob' (in container '')\n"
  ' | self.a.frob()\n'
  ' | ...........^'),
 ("self.n == 'x'",
  "compilation failed: ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(int, string)'\n"
  " | self.n == 'x'\n"
  ' | .......^'),
 ('1 == 1.0',
  "compilation failed: ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, double)'\n"
  ' | 1 == 1.0\n'
  ' | ..^'),
 ('self.n == 1u',
  "compilation failed: ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(int, uint)'\n"
  ' | self.n == 1u\n'
  ' | .......^'),
 ('size(self.n) > 0',
  "compilation failed: ERROR: <input>:1:5: found no matching overload for 'size' applied to '(int)'\n"
  ' | size(self.n) > 0\n'
  ' | ....^'),
 ('has(self.a.b)',
  "compilation failed: ERROR: <input>:1:4: type 'string' does not support field selection\n"
  ' | has(self.a.b)\n'
  ' | ...^'),
 ('self.free.x == 1',
  "compilation failed: ERROR: <input>:1:10: undefined field 'x'\n | self.free.x == 1\n | .........^"),
 ("self.o == {'x': 1}",
  "compilation failed: ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(selfType<N>.o, "
  "map(string, int))'\n"
  " | self.o == {'x': 1}\n"
  ' | .......^'),
 ('self.a.foo(',
  "compilation failed: ERROR: <input>:1:12: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', ')', "
  "'.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
  ' | self.a.foo(\n'
  ' | ...........^'),
 ('foo(',
  "compilation failed: ERROR: <input>:1:5: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', ')', "
  "'.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
  ' | foo(\n'
  ' | ....^'),
 ('[1, 2',
  "compilation failed: ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' expecting {']', ','}\n"
  ' | [1, 2\n'
  ' | .....^'),
 ('{1: 2',
  "compilation failed: ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' expecting {'}', ','}\n"
  ' | {1: 2\n'
  ' | .....^'),
 ('self.a == = 1',
  "compilation failed: ERROR: <input>:1:11: Syntax error: token recognition error at: '= '\n"
  ' | self.a == = 1\n'
  ' | ..........^'),
 ('self.a & 1',
  "compilation failed: ERROR: <input>:1:8: Syntax error: token recognition error at: '& '\n"
  ' | self.a & 1\n'
  ' | .......^\n'
  "ERROR: <input>:1:10: Syntax error: extraneous input '1' expecting <EOF>\n"
  ' | self.a & 1\n'
  ' | .........^'),
 ('1 +',
  "compilation failed: ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', "
  "'-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
  ' | 1 +\n'
  ' | ...^'),
 (')',
  "compilation failed: ERROR: <input>:1:1: Syntax error: mismatched input ')' expecting {'[', '{', '(', '.', '-', "
  "'!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
  ' | )\n'
  ' | ^'),
 ('self.',
  "compilation failed: ERROR: <input>:1:6: Syntax error: no viable alternative at input '.'\n | self.\n | .....^"),
 ('self.1',
  "compilation failed: ERROR: <input>:1:5: Syntax error: extraneous input '.1' expecting <EOF>\n"
  ' | self.1\n'
  ' | ....^'),
 ('self[',
  "compilation failed: ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', "
  "'-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
  ' | self[\n'
  ' | .....^'),
 ("'abc",
  "compilation failed: ERROR: <input>:1:1: Syntax error: token recognition error at: ''abc'\n"
  " | 'abc\n"
  ' | ^\n'
  "ERROR: <input>:1:5: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', "
  "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
  " | 'abc\n"
  ' | ....^'),
 ('"unterminated',
  'compilation failed: ERROR: <input>:1:1: Syntax error: token recognition error at: \'"unterminated\'\n'
  ' | "unterminated\n'
  ' | ^\n'
  "ERROR: <input>:1:14: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', "
  "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
  ' | "unterminated\n'
  ' | .............^'),
 ('a b',
  "compilation failed: ERROR: <input>:1:3: Syntax error: extraneous input 'b' expecting <EOF>\n | a b\n | ..^"),
 ('1 2',
  "compilation failed: ERROR: <input>:1:3: Syntax error: extraneous input '2' expecting <EOF>\n | 1 2\n | ..^"),
 ('self.a in',
  "compilation failed: ERROR: <input>:1:10: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', "
  "'-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
  ' | self.a in\n'
  ' | .........^'),
 ('!',
  "compilation failed: ERROR: <input>:1:2: Syntax error: extraneous input '<EOF>' expecting {'[', '{', '(', '.', "
  "'-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
  ' | !\n'
  ' | .^'),
 ('-',
  "compilation failed: ERROR: <input>:1:2: Syntax error: no viable alternative at input '-'\n"
  ' | -\n'
  ' | .^\n'
  "ERROR: <input>:1:2: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', "
  "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
  ' | -\n'
  ' | .^'),
 ('true false',
  "compilation failed: ERROR: <input>:1:6: Syntax error: extraneous input 'false' expecting <EOF>\n"
  ' | true false\n'
  ' | .....^'),
 ('self.a ? 1',
  "compilation failed: ERROR: <input>:1:11: Syntax error: mismatched input '<EOF>' expecting ':'\n"
  ' | self.a ? 1\n'
  ' | ..........^'),
 ('self.a ? 1 :',
  "compilation failed: ERROR: <input>:1:13: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', "
  "'-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
  ' | self.a ? 1 :\n'
  ' | ............^'),
 ('(self.a',
  "compilation failed: ERROR: <input>:1:8: Syntax error: missing ')' at '<EOF>'\n | (self.a\n | .......^"),
 ('self.a)',
  "compilation failed: ERROR: <input>:1:7: Syntax error: extraneous input ')' expecting <EOF>\n"
  ' | self.a)\n'
  ' | ......^'),
 ('[1,]', 'cel expression must evaluate to a bool'),
 ('{}', 'cel expression must evaluate to a bool'),
 ('{"a": 1,}', 'cel expression must evaluate to a bool'),
 ('self.a.matches("[")',
  'compilation failed: ERROR: <input>:1:16: invalid matches argument\n'
  ' | self.a.matches("[")\n'
  ' | ...............^'),
 ('self.list.all(x)',
  "compilation failed: ERROR: <input>:1:14: undeclared reference to 'all' (in container '')\n"
  ' | self.list.all(x)\n'
  ' | .............^\n'
  "ERROR: <input>:1:15: undeclared reference to 'x' (in container '')\n"
  ' | self.list.all(x)\n'
  ' | ..............^'),
 ('self.list.map(x)',
  "compilation failed: ERROR: <input>:1:14: undeclared reference to 'map' (in container '')\n"
  ' | self.list.map(x)\n'
  ' | .............^\n'
  "ERROR: <input>:1:15: undeclared reference to 'x' (in container '')\n"
  ' | self.list.map(x)\n'
  ' | ..............^'),
 ('has(self)', 'compilation failed: ERROR: <input>:1:5: invalid argument to has() macro\n | has(self)\n | ....^'),
 ('has(self.a, self.b)',
  "compilation failed: ERROR: <input>:1:4: undeclared reference to 'has' (in container '')\n"
  ' | has(self.a, self.b)\n'
  ' | ...^'),
 ('self.list.all(x, y, z)',
  "compilation failed: ERROR: <input>:1:21: undeclared reference to 'z' (in container '')\n"
  ' | self.list.all(x, y, z)\n'
  ' | ....................^'),
 ('self.list.exists(__result__, true)',
  'compilation failed: ERROR: <input>:1:18: iteration variable overwrites accumulator variable\n'
  ' | self.list.exists(__result__, true)\n'
  ' | .................^'),
 ('self.m.all(k, k, true)',
  'compilation failed: ERROR: <input>:1:15: duplicate variable name: k\n'
  ' | self.m.all(k, k, true)\n'
  ' | ..............^'),
 ('self.list.map(1, x)',
  'compilation failed: ERROR: <input>:1:15: argument is not an identifier\n'
  ' | self.list.map(1, x)\n'
  ' | ..............^'),
 ('self.list.filter(1, x)',
  'compilation failed: ERROR: <input>:1:18: argument is not an identifier\n'
  ' | self.list.filter(1, x)\n'
  ' | .................^'),
 ('self.list.optMap(1, x)',
  'compilation failed: ERROR: <input>:1:18: optMap() variable name must be a simple identifier\n'
  ' | self.list.optMap(1, x)\n'
  ' | .................^'),
 ("timestamp('bad') > self.ts",
  'compilation failed: ERROR: <input>:1:11: invalid timestamp argument\n'
  " | timestamp('bad') > self.ts\n"
  ' | ..........^'),
 ("duration('1x') < self.dur",
  'compilation failed: ERROR: <input>:1:10: invalid duration argument\n'
  " | duration('1x') < self.dur\n"
  ' | .........^'),
 ("self.ts > timestamp('bad')",
  'compilation failed: ERROR: <input>:1:21: invalid timestamp argument\n'
  " | self.ts > timestamp('bad')\n"
  ' | ....................^'),
 ("self.a.matches('(')",
  'compilation failed: ERROR: <input>:1:16: invalid matches argument\n'
  " | self.a.matches('(')\n"
  ' | ...............^'),
 ('9223372036854775808 > 0',
  'compilation failed: ERROR: <input>:1:1: invalid int literal\n | 9223372036854775808 > 0\n | ^'),
 ('18446744073709551616u > 0u',
  'compilation failed: ERROR: <input>:1:1: invalid uint literal\n | 18446744073709551616u > 0u\n | ^'),
 ('0x1g == 1',
  "compilation failed: ERROR: <input>:1:4: Syntax error: mismatched input 'g' expecting <EOF>\n"
  ' | 0x1g == 1\n'
  ' | ...^'),
 ('1.5e == 1.0',
  "compilation failed: ERROR: <input>:1:4: Syntax error: mismatched input 'e' expecting <EOF>\n"
  ' | 1.5e == 1.0\n'
  ' | ...^'),
 ("'\\q' == 'a'",
  "compilation failed: ERROR: <input>:1:1: Syntax error: token recognition error at: ''\\q'\n"
  " | '\\q' == 'a'\n"
  ' | ^\n'
  "ERROR: <input>:1:10: Syntax error: extraneous input 'a' expecting <EOF>\n"
  " | '\\q' == 'a'\n"
  ' | .........^\n'
  "ERROR: <input>:1:11: Syntax error: token recognition error at: '''\n"
  " | '\\q' == 'a'\n"
  ' | ..........^'),
 ("b'\\u0041' == b'A'",
  "compilation failed: ERROR: <input>:1:1: unable to unescape string\n | b'\\u0041' == b'A'\n | ^"),
 ('null == self.a',
  "compilation failed: ERROR: <input>:1:6: found no matching overload for '_==_' applied to '(null, string)'\n"
  ' | null == self.a\n'
  ' | .....^'),
 ('self.a == null',
  "compilation failed: ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(string, null)'\n"
  ' | self.a == null\n'
  ' | .......^'),
 ("[1, 'a'] == [1]",
  "compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'string'\n | [1, 'a'] == [1]\n | ....^"),
 ("{'a': 1, 'b': 'x'}.size() == 2",
  "compilation failed: ERROR: <input>:1:15: expected type 'int' but found 'string'\n"
  " | {'a': 1, 'b': 'x'}.size() == 2\n"
  ' | ..............^'),
 ("dyn([1, 'a']).size() == 2",
  "compilation failed: ERROR: <input>:1:9: expected type 'int' but found 'string'\n"
  " | dyn([1, 'a']).size() == 2\n"
  ' | ........^'),
 ('var == 1', 'compilation failed: ERROR: <input>:1:1: reserved identifier: var\n | var == 1\n | ^'),
 ('self.in == 1',
  "compilation failed: ERROR: <input>:1:6: Syntax error: no viable alternative at input '.in'\n"
  ' | self.in == 1\n'
  ' | .....^\n'
  "ERROR: <input>:1:9: Syntax error: extraneous input '==' expecting {'[', '{', '(', '.', '-', '!', 'true', "
  "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
  ' | self.in == 1\n'
  ' | ........^'),
 ('namespace == 1',
  'compilation failed: ERROR: <input>:1:1: reserved identifier: namespace\n | namespace == 1\n | ^'),
 ('1 < 2 < 3',
  "compilation failed: ERROR: <input>:1:7: found no matching overload for '_<_' applied to '(bool, int)'\n"
  ' | 1 < 2 < 3\n'
  ' | ......^'),
 ("self.nums.all(x, x > 0) ? 'a' : 'b'", 'cel expression must evaluate to a bool'),
 ('self.n.size() > 0',
  "compilation failed: ERROR: <input>:1:12: found no matching overload for 'size' applied to 'int.()'\n"
  ' | self.n.size() > 0\n'
  ' | ...........^'),
 ('self.a + self.n',
  "compilation failed: ERROR: <input>:1:8: found no matching overload for '_+_' applied to '(string, int)'\n"
  ' | self.a + self.n\n'
  ' | .......^'),
 ('self.list + self.nums',
  "compilation failed: ERROR: <input>:1:11: found no matching overload for '_+_' applied to '(list(string), "
  "list(int))'\n"
  ' | self.list + self.nums\n'
  ' | ..........^'),
 ('self.o.x.y == 1',
  "compilation failed: ERROR: <input>:1:9: type 'int' does not support field selection\n"
  ' | self.o.x.y == 1\n'
  ' | ........^'),
 ('self.free.size() == 1',
  "compilation failed: ERROR: <input>:1:15: found no matching overload for 'size' applied to "
  "'selfType<N>.free.()'\n"
  ' | self.free.size() == 1\n'
  ' | ..............^'),
 ("int('x') == 1", "program instantiation failed: type conversion error from 'string' to 'int'"),
 ('uint(-1) == 1u', 'program instantiation failed: unsigned integer overflow'),
 ("'%d'.format([1, 2]) == ''",
  'compilation failed: ERROR: <input>:1:12: too many arguments supplied to string.format (expected 1, got 2)\n'
  " | '%d'.format([1, 2]) == ''\n"
  ' | ...........^'),
 ("'%s %s'.format([1]) == ''",
  'compilation failed: ERROR: <input>:1:15: index 1 out of range\n'
  " | '%s %s'.format([1]) == ''\n"
  ' | ..............^'),
 ("{1: 'a', 'b': 'c'}.size() == 2",
  "compilation failed: ERROR: <input>:1:10: expected type 'int' but found 'string'\n"
  " | {1: 'a', 'b': 'c'}.size() == 2\n"
  ' | .........^'),
 ("[[1], ['a']].size() == 2",
  "compilation failed: ERROR: <input>:1:7: expected type 'list(int)' but found 'list(string)'\n"
  " | [[1], ['a']].size() == 2\n"
  ' | ......^'),
 ('[1, 2.0].size() == 2',
  "compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'double'\n"
  ' | [1, 2.0].size() == 2\n'
  ' | ....^'),
 ("'%d'.format(['a']) == ''",
  'compilation failed: ERROR: <input>:1:14: error during formatting: decimal clause can only be used on integers, '
  'was given string\n'
  " | '%d'.format(['a']) == ''\n"
  ' | .............^'),
 ("'%q'.format([1]) == ''",
  'compilation failed: ERROR: <input>:1:12: could not parse formatting clause: unrecognized formatting clause '
  '"q"\n'
  " | '%q'.format([1]) == ''\n"
  ' | ...........^'),
 ('[optional.of(1), 2].size() == 2',
  "compilation failed: ERROR: <input>:1:18: expected type 'optional_type(int)' but found 'int'\n"
  ' | [optional.of(1), 2].size() == 2\n'
  ' | .................^'),
 ("{'a': [1], 'b': ['x']}.size() == 2",
  "compilation failed: ERROR: <input>:1:17: expected type 'list(int)' but found 'list(string)'\n"
  " | {'a': [1], 'b': ['x']}.size() == 2\n"
  ' | ................^'),
 ("string([1, 'a']) == ''",
  "compilation failed: ERROR: <input>:1:7: found no matching overload for 'string' applied to '(list(dyn))'\n"
  " | string([1, 'a']) == ''\n"
  ' | ......^')]
COSTS = [('self.a == "x"', 3),
 ('self.n > 0', 3),
 ('self.n > 0.5', 3),
 ('self.f > 1', 3),
 ('self.list.all(x, x.size() > 0)', 6291453),
 ('self.small.all(x, x.size() > 0)', 33),
 ('self.list.all(x, self.list.all(y, x == y))', 345881509131242703),
 ('self.small.all(x, self.small.all(y, x == y))', 258),
 ("self.a.matches('^[a-z]+$')", 629148),
 ("self.b.matches('^[a-z]+$')", 12),
 ('self.a.contains(self.b)', 1258296),
 ('self.b.startsWith("x")', 3),
 ('self.m.all(k, self.m[k].size() < 5)', 3538938),
 ('self.sm.all(k, self.sm[k] > 0)', 35),
 ('self.o.x > 0 && self.o.y.size() < 3', 9),
 ('has(self.o.x)', 2),
 ('self.ios == 1 || self.ios == "a"', 6),
 ('type(self.ios) == string', 4),
 ('self.ts < timestamp("2020-01-01T00:00:00Z")', 4),
 ('self.dur < duration("1h")', 4),
 ('self.free == self.free', 4),
 ('self.objs.all(o, o.k.size() < 3)', 24),
 ("self.objs.exists(o, o.k == 'a')", 24),
 ('self.objs.map(o, o.v).sum() < 10', 59),
 ('self.nums.isSorted()', 12),
 ('self.nums.sum() > 0', 13),
 ('self.nums.max() < 5', 13),
 ('self.nums.indexOf(3) >= 0', 13),
 ('self.small.join(",").size() < 5', 21),
 ("self.b.split(',').size() < 3", 12),
 ("self.b.replace('a', 'bb').size() < 3", 12),
 ("self.b.lowerAscii() == 'x'", 7),
 ('self.dash__dash__name == "x"', 3),
 ('self.__namespace__ == "x"', 3),
 ('self.namespace == "x"', 3),
 ("quantity(self.b).isLessThan(quantity('1Gi'))", 8),
 ('isQuantity(self.b)', 6),
 ("url(self.a).getHost() == 'x'", 314577),
 ('ip(self.b).family() == 4', 8),
 ("cidr(self.b).containsIP('10.0.0.1')", 11),
 ("self.list.exists_one(x, x == 'a')", 4194304),
 ('[1, 2, 3].filter(x, x > 1).size() == 2', 68),
 ("self.small.sort()[0] == 'a'", 67),
 ('lists.range(5).size() == 5', 18),
 ("sets.contains(self.small, ['a'])", 18),
 ("self.m.exists(k, v, v == 'x')", 2359293),
 ("self.small.transformList(i, v, v + 'x').size() > 0", 100),
 ('self.?o.?x.orValue(0) > 1', 5),
 ('optional.of(self.n).hasValue()', 4),
 ('self.n / 0 == 1', 4),
 ("'%s'.format([self.b]) == 'x'", 14),
 ("self.b.indexOf('x') > 0", 7),
 ("self.b.charAt(0) == 'x'", 4),
 ("self.b.substring(1) == 'x'", 7),
 ("self.b.trim() == 'x'", 7),
 ('self.small.distinct().size() == 1', 65),
 ("self.small.reverse()[0] == 'x'", 19),
 ('[[1],[2]].flatten().size() == 2', 45),
 ('self.small.slice(0, 2).size() == 2', 17),
 ('format.dns1123Label().validate(self.b).hasValue()', 132),
 ('semver(self.b).major() == 1', 8),
 ("self.b.find('[0-9]+') == '1'", 13),
 ("self.b.findAll('[0-9]').size() == 1", 14),
 ("string(self.n) == '1'", 4),
 ('int(self.b) == 1', 4),
 ('double(self.n) == 1.0', 4),
 ('bytes(self.b).size() == 1', 8),
 ("self.b in ['a', 'b']", 14),
 ('self.n in self.nums', 14),
 ('!(self.n > 1)', 4),
 ('-self.n < 0', 4),
 ('self.flag ? self.n > 1 : self.n < 1', 5),
 ("self.list.map(x, x + 'y').exists(y, y == 'ay')", 329872257839),
 ('self.a.size() < 10 && self.a.size() > 2 || self.n == 1', 10),
 ('self.nums.all(i, i > 0) && self.nums.exists(i, i > 5)', 116),
 ('self.m.size() < 5', 4),
 ('size(self.m) < 5', 4),
 ("self.objs[0].k == 'a'", 5),
 ("self.m['a'] == 'b'", 4),
 ("self.list[0] == 'a'", 4),
 ('self.ts.getFullYear() > 2000', 4),
 ('self.dur.getHours() < 2', 4),
 ("'\\x41' == 'A'", 1),
 ("r'\\n' == '\\\\n'", 1),
 ("'''a\nb''' == 'a'", 1),
 ('self.o == null', 2),
 ('[?optional.of(1)].size() == 1', 13),
 ("{?'a': optional.none()}.size() == 0", 33),
 ("self.list[?0].orValue('x') == 'a'", 5),
 ("self.m[?'zz'].hasValue()", 4),
 ('self.?o.x.hasValue()', 3),
 ('self.o.?x.orValue(5) == 1', 5),
 ('self.a.size() == self.b.size() + self.n - self.list.size() * 2 % 3', 16),
 ("self.list.exists(x, x == 'a') || self.list.exists(x, x == 'b') && self.list.exists(x, x == 'c')", 18874359),
 ('1 == 1 == true', 2),
 ('!!true', 0),
 ('--1 == 1', 1),
 ('-(-1) == 1', 2),
 ('- 1 == -1', 1),
 ('type(self) == map', 3),
 ('self.f > self.n', 5),
 ('self.ios > 1', 3),
 ('self.ios + 1 > 1', 4),
 ('self.n / (self.n - 1) > 0', 7),
 ('self.nums[5] == 1', 3),
 ("self.m['zz'] == 'b'", 4),
 ('self.nums.max() > 1', 13),
 ('[].max() > 1', 11),
 ("self.list.join() == 'ab'", 329852964048),
 ("'%s-%d'.format([self.a, 1]) == 'x'", 14),
 ('[?optional.of(1), 2].size() == 2', 13)]
EVALS = [('self.a == "x"', ['failed rule: self.a == "x"']),
 ('self.n > 0', []),
 ('self.n > 0.5', []),
 ('self.f > 1', []),
 ('self.list.all(x, x.size() > 0)', []),
 ('self.small.all(x, x.size() > 0)', []),
 ('self.list.all(x, self.list.all(y, x == y))', ['failed rule: self.list.all(x, self.list.all(y, x == y))']),
 ('self.small.all(x, self.small.all(y, x == y))', ['failed rule: self.small.all(x, self.small.all(y, x == y))']),
 ("self.a.matches('^[a-z]+$')", []),
 ("self.b.matches('^[a-z]+$')", ["failed rule: self.b.matches('^[a-z]+$')"]),
 ('self.a.contains(self.b)', ['failed rule: self.a.contains(self.b)']),
 ('self.b.startsWith("x")', ['failed rule: self.b.startsWith("x")']),
 ('self.m.all(k, self.m[k].size() < 5)', []),
 ('self.sm.all(k, self.sm[k] > 0)', []),
 ('self.o.x > 0 && self.o.y.size() < 3', []),
 ('has(self.o.x)', []),
 ('self.ios == 1 || self.ios == "a"', []),
 ('type(self.ios) == string', ['failed rule: type(self.ios) == string']),
 ('self.ts < timestamp("2020-01-01T00:00:00Z")', ['failed rule: self.ts < timestamp("2020-01-01T00:00:00Z")']),
 ('self.dur < duration("1h")', []),
 ('self.free == self.free', []),
 ('self.objs.all(o, o.k.size() < 3)', []),
 ("self.objs.exists(o, o.k == 'a')", []),
 ('self.objs.map(o, o.v).sum() < 10', []),
 ('self.nums.isSorted()', []),
 ('self.nums.sum() > 0', []),
 ('self.nums.max() < 5', []),
 ('self.nums.indexOf(3) >= 0', []),
 ('self.small.join(",").size() < 5', []),
 ("self.b.split(',').size() < 3", []),
 ("self.b.replace('a', 'bb').size() < 3", []),
 ("self.b.lowerAscii() == 'x'", ["failed rule: self.b.lowerAscii() == 'x'"]),
 ('self.dash__dash__name == "x"', []),
 ('self.__namespace__ == "x"', []),
 ('self.namespace == "x"', []),
 ("quantity(self.b).isLessThan(quantity('1Gi'))", []),
 ('isQuantity(self.b)', []),
 ("url(self.a).getHost() == 'x'",
  ['URL parse error during conversion from string: parse "abc": invalid URI for request evaluating rule: '
   "url(self.a).getHost() == 'x'"]),
 ('ip(self.b).family() == 4',
  ['IP Address "1" parse error during conversion from string: ParseAddr("1"): unable to parse IP evaluating rule: '
   'ip(self.b).family() == 4']),
 ("cidr(self.b).containsIP('10.0.0.1')",
  ['network address parse error during conversion from string: network address parse error during conversion from '
   'string: netip.ParsePrefix("1"): no \'/\' evaluating rule: cidr(self.b).containsIP(\'10.0.0.1\')']),
 ("self.list.exists_one(x, x == 'a')", []),
 ('[1, 2, 3].filter(x, x > 1).size() == 2', []),
 ("self.small.sort()[0] == 'a'", []),
 ('lists.range(5).size() == 5', []),
 ("sets.contains(self.small, ['a'])", []),
 ("self.m.exists(k, v, v == 'x')", ["failed rule: self.m.exists(k, v, v == 'x')"]),
 ("self.small.transformList(i, v, v + 'x').size() > 0", []),
 ('self.?o.?x.orValue(0) > 1', ['failed rule: self.?o.?x.orValue(0) > 1']),
 ('optional.of(self.n).hasValue()', []),
 ('self.n / 0 == 1', ['division by zero evaluating rule: self.n / 0 == 1']),
 ("'%s'.format([self.b]) == 'x'", ["failed rule: '%s'.format([self.b]) == 'x'"]),
 ("self.b.indexOf('x') > 0", ["failed rule: self.b.indexOf('x') > 0"]),
 ("self.b.charAt(0) == 'x'", ["failed rule: self.b.charAt(0) == 'x'"]),
 ("self.b.substring(1) == 'x'", ["failed rule: self.b.substring(1) == 'x'"]),
 ("self.b.trim() == 'x'", ["failed rule: self.b.trim() == 'x'"]),
 ('self.small.distinct().size() == 1', ['failed rule: self.small.distinct().size() == 1']),
 ("self.small.reverse()[0] == 'x'", ["failed rule: self.small.reverse()[0] == 'x'"]),
 ('[[1],[2]].flatten().size() == 2', []),
 ('self.small.slice(0, 2).size() == 2', []),
 ('format.dns1123Label().validate(self.b).hasValue()',
  ['failed rule: format.dns1123Label().validate(self.b).hasValue()']),
 ('semver(self.b).major() == 1',
  ['No Major.Minor.Patch elements found evaluating rule: semver(self.b).major() == 1']),
 ("self.b.find('[0-9]+') == '1'", []),
 ("self.b.findAll('[0-9]').size() == 1", []),
 ("string(self.n) == '1'", []),
 ('int(self.b) == 1', []),
 ('double(self.n) == 1.0', []),
 ('bytes(self.b).size() == 1', []),
 ("self.b in ['a', 'b']", ["failed rule: self.b in ['a', 'b']"]),
 ('self.n in self.nums', []),
 ('!(self.n > 1)', []),
 ('-self.n < 0', []),
 ('self.flag ? self.n > 1 : self.n < 1', ['failed rule: self.flag ? self.n > 1 : self.n < 1']),
 ("self.list.map(x, x + 'y').exists(y, y == 'ay')", []),
 ('self.a.size() < 10 && self.a.size() > 2 || self.n == 1', []),
 ('self.nums.all(i, i > 0) && self.nums.exists(i, i > 5)',
  ['failed rule: self.nums.all(i, i > 0) && self.nums.exists(i, i > 5)']),
 ('self.m.size() < 5', []),
 ('size(self.m) < 5', []),
 ("self.objs[0].k == 'a'", []),
 ("self.m['a'] == 'b'", []),
 ("self.list[0] == 'a'", []),
 ('self.ts.getFullYear() > 2000', []),
 ('self.dur.getHours() < 2', []),
 ("'\\x41' == 'A'", []),
 ("r'\\n' == '\\\\n'", []),
 ("'''a\nb''' == 'a'", ["failed rule: '''a\nb''' == 'a'"]),
 ('self.o == null', ['failed rule: self.o == null']),
 ('[?optional.of(1)].size() == 1', []),
 ("{?'a': optional.none()}.size() == 0", []),
 ("self.list[?0].orValue('x') == 'a'", []),
 ("self.m[?'zz'].hasValue()", ["failed rule: self.m[?'zz'].hasValue()"]),
 ('self.?o.x.hasValue()', []),
 ('self.o.?x.orValue(5) == 1', []),
 ('self.a.size() == self.b.size() + self.n - self.list.size() * 2 % 3',
  ['failed rule: self.a.size() == self.b.size() + self.n - self.list.size() * 2 % 3']),
 ("self.list.exists(x, x == 'a') || self.list.exists(x, x == 'b') && self.list.exists(x, x == 'c')", []),
 ('1 == 1 == true', []),
 ('!!true', []),
 ('--1 == 1', []),
 ('-(-1) == 1', []),
 ('- 1 == -1', []),
 ('type(self) == map', []),
 ('self.f > self.n', []),
 ('self.ios > 1', ['failed rule: self.ios > 1']),
 ('self.ios + 1 > 1', []),
 ('self.n / (self.n - 1) > 0', ['division by zero evaluating rule: self.n / (self.n - 1) > 0']),
 ('self.nums[5] == 1', ['index out of bounds: 5 evaluating rule: self.nums[5] == 1']),
 ("self.m['zz'] == 'b'", ["no such key: zz evaluating rule: self.m['zz'] == 'b'"]),
 ('self.nums.max() > 1', []),
 ('[].max() > 1', ['max called on empty list evaluating rule: [].max() > 1']),
 ("self.list.join() == 'ab'", []),
 ("'%s-%d'.format([self.a, 1]) == 'x'", ["failed rule: '%s-%d'.format([self.a, 1]) == 'x'"]),
 ('[?optional.of(1), 2].size() == 2', [])]
