/**
 * `--sabotage leak`: preloaded into one gateway's processes (`NODE_OPTIONS=--import`), a leak the
 * product does not have — 1 MB more kept every second, written so that it is resident — which
 * the rehearsal's memory check must catch.
 */
const kept: Buffer[] = [];
setInterval(() => kept.push(Buffer.alloc(1024 * 1024, 1)), 1000).unref();
