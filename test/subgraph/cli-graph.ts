// The post graph of the subgraph tests, as a graph file the CLI can run.
import { postGraph } from './fixtures.js';

export default postGraph();
