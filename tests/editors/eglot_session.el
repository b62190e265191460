;;; eglot_session.el --- eglot against zettel-lsp, for tests/editors/test_emacs_eglot.py  -*- lexical-binding: t -*-

;; Loaded by `emacs --batch -q' after the first elisp block of docs/getting-started.md's Emacs
;; section (eglot-server-programs, eglot-ensure in markdown-mode-hook, C-M-i). It opens one card,
;; lets eglot start the server as in a user's Emacs, and uses each feature through eglot's own
;; functions: eldoc's hover function, xref-find-definitions, the xref backend's references and
;; apropos (workspace symbols), eglot-code-actions, completion-at-point and Flymake. Then it
;; loads the guide's second block (the vault as a project). What it saw goes as JSON to the file
;; named in the params (the JSON file named by $ZETTEL_EMACS_PARAMS): a step that fails reports
;; {"error": ...} under its key, an error before the steps ends up in "error".

(require 'cl-lib)
(require 'json)
(require 'subr-x)
(require 'eglot)
(require 'markdown-mode)
(require 'flymake)
(require 'xref)

(defvar zt-params
  (with-temp-buffer
    (insert-file-contents (getenv "ZETTEL_EMACS_PARAMS"))
    (json-parse-buffer :object-type 'alist :array-type 'list)))

(defvar zt-report nil "The report, an alist (JSON object) built in reverse.")
(defvar zt-messages nil "The server's window/showMessage notifications.")
(defvar zt-log nil "The server's window/logMessage lines naming the vault root.")
(defvar zt-seconds nil "How long each step took.")
(defvar zt-start (float-time))

(defun zt-param (key) (alist-get key zt-params))
(defun zt-put (key value) (push (cons key value) zt-report))

(defmacro zt-step (key &rest body)
  "Report BODY's value as KEY, or {\"error\": message} when it fails: one feature's failure
leaves the others to be checked. A pause first, as between a user's commands."
  (declare (indent 1))
  `(let ((start (progn (zt-idle) (float-time))))
     (zt-put ,key (condition-case err (progn ,@body)
                    (error `((error . ,(error-message-string err))))))
     (push (cons ,key (- (float-time) start)) zt-seconds)))

(cl-defmethod eglot-handle-notification :before
  (_server (_method (eql window/showMessage)) &key type message)
  (push `((type . ,type) (message . ,message)) zt-messages))

(cl-defmethod eglot-handle-notification :before
  (_server (_method (eql window/logMessage)) &key _type message)
  (when (string-match-p "vault root" message)
    (push message zt-log)))

(defun zt-idle ()
  "Run the idle timers, as a user's Emacs does when the user pauses (batch Emacs is never
idle): eglot sends a buffer's changes from one."
  (dolist (timer (copy-sequence timer-idle-list))
    (timer-event-handler timer)))

(defun zt-wait (what pred &optional seconds)
  "Run timers and process output until PRED returns non-nil (its value) or SECONDS pass."
  (let ((deadline (+ (float-time) (or seconds 20)))
        value)
    (while (and (not (setq value (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.1)
      (zt-idle))
    (or value (error "Timed out after %s s waiting for %s" (or seconds 20) what))))

(defun zt-goto (needle &optional shift)
  "Point on NEEDLE's first occurrence in the buffer, SHIFT characters in."
  (goto-char (point-min))
  (search-forward needle)
  (goto-char (+ (match-beginning 0) (or shift 0))))

(defun zt-line () (buffer-substring-no-properties (line-beginning-position) (line-end-position)))

(defun zt-ready (server)
  "Until zettel.status says every vault is ready; the last status."
  (let (status)
    (zt-wait "every vault ready"
             (lambda ()
               (setq status (jsonrpc-request server :workspace/executeCommand
                                             '(:command "zettel.status" :arguments [])))
               (let ((vaults (append (plist-get status :vaults) nil)))
                 (and vaults (cl-every (lambda (v) (equal (plist-get v :phase) "ready"))
                                       vaults))))
             (zt-param 'ready_seconds))
    status))

(defun zt-diagnostics ()
  "Flymake's diagnostics in this buffer: line, the text they cover, type and message."
  (vconcat
   (mapcar (lambda (d)
             `((line . ,(line-number-at-pos (flymake-diagnostic-beg d)))
               (text . ,(buffer-substring-no-properties (flymake-diagnostic-beg d)
                                                        (flymake-diagnostic-end d)))
               (type . ,(symbol-name (flymake-diagnostic-type d)))
               (message . ,(flymake-diagnostic-text d))))
           (sort (flymake-diagnostics) (lambda (a b) (< (flymake-diagnostic-beg a)
                                                        (flymake-diagnostic-beg b)))))))

(defun zt-wait-diagnostics (what pred)
  "Until Flymake's diagnostics satisfy PRED (Flymake started again each second); them."
  (let ((next 0) diags)
    (zt-wait what (lambda ()
                    (when (> (float-time) next)
                      (flymake-start)
                      (setq next (+ (float-time) 1)))
                    (setq diags (zt-diagnostics))
                    (funcall pred diags)))
    diags))

(defun zt-has-text (diags text)
  (cl-some (lambda (d) (equal (alist-get 'text d) text)) diags))

(defun zt-names (diags link)
  "Whether a diagnostic's message names LINK's target (its place moves with edits)."
  (let ((name (string-trim link "\\[\\[" "]]")))
    (cl-some (lambda (d) (string-match-p (regexp-quote name) (alist-get 'message d))) diags)))

(defun zt-hover ()
  "eglot's hover through its eldoc function, as rendered for the echo area."
  (let (info)
    (eglot-hover-eldoc-function (lambda (doc &rest _) (setq info (or doc ""))))
    (zt-wait "the hover" (lambda () info))
    (substring-no-properties info)))

(defun zt-definition (buffer)
  "Where `xref-find-definitions' on the link at point lands; back to BUFFER after."
  (unwind-protect
      (progn
        (xref-find-definitions (xref-backend-identifier-at-point 'eglot))
        `((file . ,buffer-file-name) (line . ,(line-number-at-pos)) (text . ,(zt-line))))
    (switch-to-buffer buffer)))

(defun zt-references ()
  "What `xref-find-references' lists for the link at point: each item's file and line."
  (vconcat (mapcar (lambda (item)
                     (let ((location (xref-item-location item)))
                       `((file . ,(xref-location-group location))
                         (line . ,(xref-location-line location)))))
                   (xref-backend-references 'eglot (xref-backend-identifier-at-point 'eglot)))))

(defun zt-apropos (pattern)
  "The workspace-symbol search as `xref-find-apropos' asks it: each item's summary and file."
  (vconcat (mapcar (lambda (item)
                     `((summary . ,(substring-no-properties (xref-item-summary item)))
                       (file . ,(xref-location-group (xref-item-location item)))))
                   (xref-backend-apropos 'eglot pattern))))

(defun zt-code-action (needle &optional pick)
  "The code actions on NEEDLE's link, then one applied through `eglot-code-actions' as a user
picks it: the title starting with PICK, else the default (the preferred one); a question to
edit a file not open is answered yes. The titles and the line after."
  (zt-goto needle 3)
  (let* ((titles (mapcar (lambda (a) (plist-get a :title))
                         (eglot-code-actions (point) (point))))
         (completing-read-function
          (lambda (_p _c &optional _r _m _i _h default &rest _)
            (or (and pick (seq-find (lambda (title) (string-prefix-p pick title)) titles))
                default)))
         (last-nonmenu-event ?\r))
    (cl-letf (((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
      (eglot-code-actions (point) (point) nil t))
    `((titles . ,(vconcat titles)) (line . ,(zt-line)))))

(defun zt-on-new-line (typed fn)
  "FN's value with point after TYPED on a new last line; the line removed after."
  (goto-char (point-max))
  (let ((start (point)))
    (insert "\n" typed)
    (unwind-protect (funcall fn)
      (delete-region start (point-max)))))

(defun zt-create-card (typed file)
  "\"Create card\" on the link ending TYPED, on a new line: FILE's buffer text after (unsaved,
then killed: the vault stays as it was)."
  (zt-on-new-line typed
    (lambda ()
      (zt-code-action (substring typed (string-match "\\[\\[" typed)) "Create card")
      (let ((buffer (find-buffer-visiting file)))
        (unless buffer (error "No buffer visits %s" file))
        (prog1 `((exists_on_disk . ,(if (file-exists-p file) t :json-false))
                 (text . ,(with-current-buffer buffer (buffer-string))))
          (with-current-buffer buffer (set-buffer-modified-p nil))
          (kill-buffer buffer))))))

(defun zt-completion (typed)
  "A new line ending in TYPED: the candidates `completion-at-point' gets; the line removed."
  (zt-on-new-line typed
    (lambda ()
      (let* ((capf (eglot-completion-at-point))
             (probe (buffer-substring-no-properties (nth 0 capf) (nth 1 capf)))
             (candidates (all-completions probe (nth 2 capf))))
        `((probe . ,probe)
          (candidates . ,(vconcat (mapcar #'substring-no-properties candidates))))))))

(defun zt-complete-in-place (typed)
  "A new line ending in TYPED, then the completion key (C-M-i); the line."
  (zt-on-new-line typed
    (lambda ()
      (call-interactively (key-binding (kbd "C-M-i")))  ; the guide binds it
      (zt-line))))

(defun zt-rename (needle new-name)
  "`eglot-rename' on NEEDLE's link to NEW-NAME, editing the files not open as eglot asks (yes):
the links in this buffer, each other buffer eglot changed with its first line, and the server's
messages since; every buffer then reverted (the vault stays as it was)."
  (zt-goto needle 3)
  (let ((seen (length zt-messages)))
    (cl-letf (((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
      (eglot-rename new-name))
    (zt-wait "the rename's message" (lambda () (> (length zt-messages) seen)) 5)
    (prog1 `((links . ,(vconcat (zt-links)))
             (others . ,(vconcat
                         (cl-loop for b in (buffer-list)
                                  when (and (buffer-file-name b) (buffer-modified-p b)
                                            (not (eq b (current-buffer))))
                                  collect `((file . ,(buffer-file-name b))
                                            (first_line . ,(with-current-buffer b
                                                             (goto-char (point-min))
                                                             (zt-line)))))))
             (messages . ,(vconcat (last (reverse zt-messages) (- (length zt-messages) seen)))))
      (dolist (b (buffer-list))
        (when (and (buffer-file-name b) (buffer-modified-p b))
          (with-current-buffer b (revert-buffer t t t)))))))

(defun zt-links ()
  "The [[links]] in this buffer, in order."
  (save-excursion
    (goto-char (point-min))
    (let (links)
      (while (re-search-forward "\\[\\[[^]]*]]" nil t)
        (push (match-string-no-properties 0) links))
      (nreverse links))))

(defun zt-session ()
  (find-file (zt-param 'card))
  (let ((card (current-buffer)))
    (zt-put 'major_mode (symbol-name major-mode))
    ;; eglot-ensure connects from post-command-hook: batch Emacs has no command loop
    (run-hooks 'post-command-hook)
    (zt-wait "eglot to manage the card" (lambda () eglot--managed-mode) 60)
    (let ((server (eglot-current-server)))
      (zt-put 'project_root (expand-file-name (project-root (eglot--project server))))
      (push (cons 'managed (- (float-time) zt-start)) zt-seconds)
      (zt-put 'status (zt-ready server))
      (push (cons 'ready (- (float-time) zt-start)) zt-seconds)
      (zt-step 'diagnostics
        (zt-wait-diagnostics "the unresolved link's diagnostic"
                             (lambda (ds) (zt-has-text ds (zt-param 'typo)))))
      (zt-step 'hover (zt-goto (zt-param 'link) 3) (zt-hover))
      (zt-step 'definition (zt-goto (zt-param 'link) 3) (zt-definition card))
      (zt-step 'references (zt-goto (zt-param 'link) 3) (zt-references))
      (zt-step 'symbols (zt-apropos (zt-param 'query)))
      (zt-step 'code_action (zt-code-action (zt-param 'typo)))
      (zt-step 'diagnostics_after
        (zt-wait-diagnostics "the fixed link's diagnostic to go"
                             (lambda (ds) (not (zt-names ds (zt-param 'typo))))))
      (zt-step 'create_card (zt-create-card "Shaping before [[Proofing]]" (zt-param 'new_card)))
      (zt-step 'completion_empty (zt-completion "A loaf from a [["))
      (zt-step 'completion (zt-completion (concat "A loaf from a [[" (zt-param 'prefix))))
      (zt-step 'completed_line
        (zt-complete-in-place (concat "Wet dough, [[" (zt-param 'unique))))
      (zt-step 'rename (zt-rename (zt-param 'link) "Water ratio"))
      (set-buffer-modified-p nil)
      (load (zt-param 'project_snippet) nil t)
      (zt-step 'project_after_snippet
        (expand-file-name (project-root (project-current nil default-directory))))
      ;; shutdown and exit as eglot-shutdown sends them, but without its delete-process
      ;; right after (Emacs 28's jsonrpc-shutdown): the server must exit by itself
      (jsonrpc-request server :shutdown nil :timeout 10)
      (jsonrpc-notify server :exit nil)
      (let ((process (jsonrpc--process server)))
        (zt-wait "the server to exit" (lambda () (not (process-live-p process))) 15)
        (zt-put 'server_exit (process-exit-status process))))))

(defun zt-write-report ()
  (zt-put 'emacs emacs-version)
  (zt-put 'seconds (reverse zt-seconds))
  (zt-put 'eglot (locate-library "eglot"))
  (zt-put 'messages (vconcat (reverse zt-messages)))
  (zt-put 'root_log (vconcat (reverse zt-log)))
  (dolist (b (buffer-list))  ; the server's stderr: its log
    (when (string-match-p "EGLOT.*stderr" (buffer-name b))
      (with-current-buffer b
        (zt-put 'server_stderr
                (buffer-substring-no-properties (max (point-min) (- (point-max) 4000))
                                                (point-max))))))
  (with-temp-file (zt-param 'output)
    (insert (json-encode (reverse zt-report)))))

(condition-case err
    (zt-session)
  (error (zt-put 'error (error-message-string err))))
(zt-write-report)
(kill-emacs 0)

;;; eglot_session.el ends here
