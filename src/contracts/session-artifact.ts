/** Something a run hands to its session to keep (a file, a summary), listed by later runs of the session. */
export interface SessionArtifact {
  name: string;
  kind: string;
  payload: unknown;
  metadata: Record<string, unknown>;
}
