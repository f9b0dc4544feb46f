// webcrypto.mjs - imported first by the scripts that load LangChain JS: Node 18 (Debian
// bookworm's nodejs) has the Web Crypto API only as require('node:crypto').webcrypto, while
// langsmith (loaded by @langchain/core) calls the global `crypto` that Node 19 and later
// define: "ReferenceError: crypto is not defined". Node 19+ is left as it is.
import { webcrypto } from 'node:crypto';

if (!globalThis.crypto) globalThis.crypto = webcrypto;
