import { expect, it } from 'vitest';
import { parsePartialJson } from '../../src/loop/step/partial-json.js';
it('parses partial json', () => {
  expect(parsePartialJson('{"name": "Ad')).toEqual({ name: 'Ad' });
  expect(parsePartialJson('{"name": "Ada", "tags": ["a", "b')).toEqual({ name: 'Ada', tags: ['a', 'b'] });
  expect(parsePartialJson('{"name": "Ada", "ag')).toEqual({ name: 'Ada' });
  expect(parsePartialJson('{"name": "Ada", "age":')).toEqual({ name: 'Ada' });
  expect(parsePartialJson('{"n": 1, "age": 4')).toEqual({ n: 1, age: 4 });
  expect(parsePartialJson('{"a": {"b": [1, 2')).toEqual({ a: { b: [1, 2] } });
  expect(parsePartialJson('')).toBeUndefined();
  expect(parsePartialJson('{"done": true}')).toEqual({ done: true });
});
