/**
 * "Zettel: Suggest Links": the server's code actions for the whole note in a QuickPick.
 *
 * The request goes straight to zettel-lsp through the language client (not through
 * `vscode.executeCodeActionProvider`, which would mix in other extensions' actions). The
 * "Add related links" action comes without an edit (it is computed on `codeAction/resolve`),
 * so the picked action is resolved first; the edit is applied with `workspace.applyEdit`, one
 * undo step in the editor. The server never writes files itself.
 */

import * as vscode from "vscode";
import {
  type CodeAction,
  CodeActionRequest,
  CodeActionResolveRequest,
  CodeActionTriggerKind,
  type LanguageClient,
} from "vscode-languageclient/node";
import { NotRunningError, type ZettelClient } from "./client";
import { actionDescription, isCodeActionLiteral, orderActions } from "./lib/actions";
import { isNote } from "./relatedView";

type Item = vscode.QuickPickItem & { action: CodeAction };

export async function suggestLinks(client: ZettelClient, uri?: vscode.Uri): Promise<void> {
  const lc = client.running;
  if (!lc) {
    void vscode.window.showWarningMessage(new NotRunningError(client.state).message);
    return;
  }
  const target = uri ?? vscode.window.activeTextEditor?.document.uri;
  const doc = target ? await vscode.workspace.openTextDocument(target) : undefined;
  if (!isNote(doc)) {
    void vscode.window.showInformationMessage("Zettel: open a Markdown note to get link suggestions.");
    return;
  }

  const actions = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: "Zettel: finding link suggestions" },
    () => codeActions(lc, doc),
  );
  if (actions.length === 0) {
    void vscode.window.showInformationMessage("Zettel: no link suggestions for this note.");
    return;
  }
  const items: Item[] = orderActions(actions).map((action) => ({
    label: action.title,
    description: actionDescription(action.kind),
    action,
  }));
  const pick = await vscode.window.showQuickPick(items, {
    title: `Suggest links: ${vscode.workspace.asRelativePath(doc.uri)}`,
    placeHolder: "Pick a change to apply to the note (it can be undone)",
    matchOnDescription: true,
  });
  if (pick) await apply(lc, doc, pick.action);
}

async function codeActions(lc: LanguageClient, doc: vscode.TextDocument): Promise<CodeAction[]> {
  const last = doc.lineAt(Math.max(0, doc.lineCount - 1));
  const whole = new vscode.Range(0, 0, last.lineNumber, last.text.length);
  const answer = await lc.sendRequest(CodeActionRequest.type, {
    textDocument: { uri: lc.code2ProtocolConverter.asUri(doc.uri) },
    range: lc.code2ProtocolConverter.asRange(whole),
    context: { diagnostics: [], triggerKind: CodeActionTriggerKind.Invoked },
  });
  return (answer ?? []).filter((a): a is CodeAction => isCodeActionLiteral(a));
}

async function apply(lc: LanguageClient, doc: vscode.TextDocument, picked: CodeAction): Promise<void> {
  let action = picked;
  if (!action.edit && action.data !== undefined) {
    action = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: "Zettel: computing the edit" },
      () => lc.sendRequest(CodeActionResolveRequest.type, picked),
    );
  }
  if (action.edit) {
    const edit = await lc.protocol2CodeConverter.asWorkspaceEdit(action.edit);
    if (edit.size === 0) {
      void vscode.window.showInformationMessage(`Zettel: ${action.title}: nothing to change.`);
    } else if (!(await vscode.workspace.applyEdit(edit))) {
      void vscode.window.showWarningMessage(
        "Zettel: the change could not be applied (did the note change meanwhile?). Try again.",
      );
      return;
    } else {
      await vscode.window.showTextDocument(doc, { preserveFocus: false });
    }
  }
  if (action.command) {
    const command = lc.protocol2CodeConverter.asCommand(action.command);
    await vscode.commands.executeCommand(command.command, ...(command.arguments ?? []));
  }
}
