// A graph file with an input schema, for the command's refusal of a private input field.
import { z } from 'zod';
import { END, graph } from '../../src/index.js';

const State = z.object({ title: z.string(), secret: z.string().default('') });

export default graph('inputs', { state: State, input: State.pick({ title: true }) })
  .node('noop', () => undefined)
  .edge('noop', END)
  .entry('noop')
  .compile();
