import type { SessionManager } from "../sessions/session-manager.js";

export interface SessionSkillSummary {
  name: string;
  description: string;
  allowedTools: string[];
  /** Capabilities the skill requests (`permissions` front matter); present only when it declares some. */
  permissions?: ("destructive" | "shell" | "network")[];
  path: string;
  metadata: Record<string, unknown>;
}

export interface SkillReference {
  path: string;
  content: string;
}

/** The skills seam. */
export interface SkillsManager {
  prepareSession(
    sessionId: string,
    sessionManager: SessionManager,
  ): Promise<Record<string, SessionSkillSummary>>;
  loadReferences(
    sessionId: string,
    skillName: string,
    sessionManager: SessionManager,
  ): Promise<SkillReference[]>;
  runSkill(
    sessionId: string,
    skillName: string,
    payload: Record<string, unknown>,
    sessionManager: SessionManager,
  ): Promise<Record<string, unknown>>;
  close?(): Promise<void>;
}
