// run.mjs - every SDK suite in one TAP stream: MOCK_URL=http://127.0.0.1:PORT node run.mjs
// (tests/e2e/mock_sdk.sh installs the pinned packages, starts the mock and runs it).
import './webcrypto.mjs'; // first: Node 18 has no global crypto, which langsmith calls
import { run, version } from './lib.mjs';
import './conformance.mjs';
import './clients.mjs';

const pkgs = ['openai', '@anthropic-ai/sdk', '@google/genai', '@langchain/core', '@langchain/openai',
  '@langchain/anthropic', 'ai', '@ai-sdk/openai', '@ai-sdk/anthropic', 'zod'];
const failed = await run(`${pkgs.map((p) => `${p} ${version(p)}`).join(', ')}, node ${process.version}`);
process.exit(failed ? 1 : 0);
