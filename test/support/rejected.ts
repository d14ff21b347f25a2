/** The `ApiError` a call throws (a 400 in the parameter tests); fails when it throws nothing or something else. */
import { ApiError } from '../../src/errors.ts';

export function rejected(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}
