/**
 * What a tool may do with its run's folder. The folder itself (`RunFolder` in run-folders/) implements it; tools
 * see only this, so the tool contract does not depend on how the folder writes its files.
 */
export interface RunFolderHandle {
  readonly runId: string;
  readonly dir: string;
  readonly workspaceDir: string;
  readonly deliverablesDir: string;
  readonly archiveDir: string;
  readonly logsDir: string;
  /** Write a whole file under `archive/`; returns its path, or nothing when the write failed. */
  writeArchive(fileName: string, content: string): string | undefined;
  /** Append text to a file under `archive/`. */
  appendArchive(fileName: string, text: string): void;
}
