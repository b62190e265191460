/** Open a card at a line range: reveal the chunk, select its first line. */

import * as vscode from "vscode";

export async function openAt(
  uri: vscode.Uri,
  lineStart: number,
  lineEnd: number,
  options: { preserveFocus?: boolean; preview?: boolean } = {},
): Promise<vscode.TextEditor> {
  const doc = await vscode.workspace.openTextDocument(uri);
  const lastLine = Math.max(0, doc.lineCount - 1);
  const first = Math.min(Math.max(0, lineStart), lastLine);
  const last = Math.min(Math.max(first, lineEnd), lastLine);
  const selection = new vscode.Range(first, 0, first, doc.lineAt(first).text.length);
  const editor = await vscode.window.showTextDocument(doc, {
    selection,
    preserveFocus: options.preserveFocus ?? false,
    preview: options.preview,
  });
  // The whole chunk in view (centred if it was off screen), the selection on its first line.
  editor.revealRange(
    new vscode.Range(first, 0, last, doc.lineAt(last).text.length),
    vscode.TextEditorRevealType.InCenterIfOutsideViewport,
  );
  return editor;
}
