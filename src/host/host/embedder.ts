import { KeelError } from "../../errors/keel-error.js";

/**
 * What turns texts into vectors for a vector knowledge base. Keel ships no embedding model: the host application
 * passes one, usually from its model provider's embeddings endpoint. Texts that mean the same should get vectors
 * pointing the same way; only the direction counts, as the bases rank by cosine.
 */
export interface Embedder {
  /** One vector per text, in the texts' order, every vector of the same length. */
  embed(texts: readonly string[], options?: { signal?: AbortSignal }): Promise<number[][]>;
}

/** An embedder that broke its contract: a missing vector, a length that changed, a value that is not a number. */
export const EMBEDDING_INVALID = "host.embedding_invalid";

/**
 * Embeds `texts` in batches of `batchSize` and hands back unit vectors, checked: as many as the texts, one length,
 * finite numbers. A zero vector stays zero (it points nowhere, so it is similar to nothing).
 */
export async function embedUnitVectors(
  embedder: Embedder,
  texts: readonly string[],
  options: { batchSize: number; signal?: AbortSignal | undefined },
): Promise<Float64Array[]> {
  const vectors: Float64Array[] = [];
  for (let start = 0; start < texts.length; start += options.batchSize) {
    const batch = texts.slice(start, start + options.batchSize);
    const embedded = await embedder.embed(batch, options.signal ? { signal: options.signal } : {});
    if (!Array.isArray(embedded) || embedded.length !== batch.length)
      throw invalid(`the embedder answered ${describe(embedded)} for ${batch.length} texts`);
    for (const vector of embedded) {
      const length = vectors[0]?.length ?? vector?.length;
      if (!Array.isArray(vector) || vector.length === 0 || vector.length !== length)
        throw invalid(
          `the embedder answered a vector of ${describe(vector)}, not ${length ?? "some"} numbers`,
        );
      if (!vector.every(Number.isFinite))
        throw invalid("the embedder answered a vector with a non-finite value");
      vectors.push(unit(vector));
    }
  }
  return vectors;
}

/** Refuses vectors of another length than a base already holds (`held`, undefined when it holds none). */
export function checkVectorLength(held: number | undefined, vectors: readonly Float64Array[]): void {
  const length = vectors[0]?.length;
  if (held === undefined || length === undefined || length === held) return;
  throw new KeelError(`the embedder's vectors changed length from ${held} to ${length}`, {
    code: EMBEDDING_INVALID,
    hint: "Use one embedding model for every document of a base, or build the base afresh",
  });
}

/** The dot product of two unit vectors of one length: their cosine. */
export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sum = 0;
  for (let index = 0; index < a.length; index++) sum += a[index]! * b[index]!;
  return sum;
}

/** A cosine as the wire's distance: lower is closer, 0 for the same direction, 2 for the opposite one. */
export function cosineDistance(cosine: number): number {
  return Math.min(2, Math.max(0, 1 - cosine));
}

function unit(vector: readonly number[]): Float64Array {
  const norm = Math.sqrt(dot(vector, vector));
  return Float64Array.from(vector, (value) => (norm === 0 ? 0 : value / norm));
}

function describe(value: unknown): string {
  return Array.isArray(value) ? `${value.length} items` : typeof value;
}

function invalid(message: string): KeelError {
  return new KeelError(message, {
    code: EMBEDDING_INVALID,
    hint: "An embedder answers one array of numbers per text, every array of the same length",
  });
}
