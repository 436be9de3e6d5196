// How a name already taken is refused: the unique indexes decide (an insert that loses a race fails with a unique
// violation), and the violation becomes the port's refusal (domain/storage/refusals.ts), whichever module inserted the
// row.
import type { InputError } from '../../explained-error.js';

const UNIQUE_VIOLATION = '23505';
export const FOREIGN_KEY_VIOLATION = '23503';

export type Wording = 'create' | 'seed';

/** `statement`, with a violation (`violation`, an error code) of one of `refusals`' constraints thrown as that refusal. */
export async function refusing<T>(violation: string, statement: Promise<T>, refusals: Record<string, () => InputError>): Promise<T> {
  try {
    return await statement;
  } catch (error) {
    const { code, constraint } = error as { code?: string; constraint?: string };
    if (code === violation && constraint !== undefined && Object.hasOwn(refusals, constraint)) throw refusals[constraint]!();
    throw error;
  }
}

/** `statement`, with a unique violation of one of `refusals`' indexes thrown as that refusal. */
export const refusingTaken = <T>(statement: Promise<T>, refusals: Record<string, () => InputError>) => refusing(UNIQUE_VIOLATION, statement, refusals);
