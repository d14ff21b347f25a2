/** Event streams (src/stream): how many a client and the gateway may hold open, and how far a slow reader may fall behind. */
import { int, scaled } from './parse.ts';
import { section } from './setting.ts';

export const streams = section({
  streamsPerClient: {
    env: 'STREAMS_PER_CLIENT',
    default: 4,
    parse: int(1, 100_000),
    meaning:
      'event streams (`/v1/killmails/stream`, `/v1/events/stream`) one client (the rate limit\'s identity) may hold open in the whole gateway (with workers, the primary counts them); past it 429 `rate_limited` with `RateLimit: "streams";r=0`',
    readBy: ['gateway'],
  },
  streamsMax: {
    env: 'STREAMS_MAX',
    default: 1000,
    parse: int(1, 1_000_000),
    meaning: 'event streams open in the gateway (all its workers together: each admits its share); past it 503 `overloaded`',
    readBy: ['gateway'],
  },
  streamBufferBytes: {
    env: 'STREAM_BUFFER_KB',
    default: 1024,
    parse: scaled(int(1, 1_048_576), 1024),
    meaning:
      'unsent bytes past which a stream whose client does not read is cut (a page of rows at most comes on top); a stream that takes nothing for 10 s while a walk waits for it is cut too',
    readBy: ['gateway'],
  },
});
