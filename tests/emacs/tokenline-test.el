;;; tokenline-test.el --- Emacs lsp-mode drives the Tokenline server  -*- lexical-binding: t -*-
;;
;; emacs --batch -l tests/emacs/tokenline-test.el
;; Environment: TOKENLINE_SERVER_CMD (JSON list), TOKENLINE_EMACS_OUT (JSON record written here),
;; TOKENLINE_EMACS_ROOT (a scratch directory). The client registration is the one
;; docs/editors.md shows. The record is checked by tests/emacs/test_emacs.py.

(require 'package)
(package-initialize)
(require 'json)
(require 'lsp-mode)
(require 'markdown-mode)

(defvar tokenline-test-record (make-hash-table :test 'equal))
(defvar tokenline-test-statuses nil)
(defvar-local tokenline-status nil)

(setq lsp-session-file (make-temp-file "tokenline-lsp-session"))
(setq lsp-enable-file-watchers nil
      lsp-auto-guess-root nil
      lsp-restart 'ignore
      lsp-keep-workspace-alive nil
      lsp-semantic-tokens-enable t
      lsp-modeline-code-actions-enable nil
      lsp-headerline-breadcrumb-enable nil
      lsp-enable-snippet nil)

;; --- the configuration of docs/editors.md -------------------------------------------------
(add-to-list 'lsp-language-id-configuration '(markdown-mode . "markdown"))
(lsp-register-custom-settings
 '(("tokenline.contextWindow" 40)
   ("tokenline.warnAt" 0.5)
   ("tokenline.model" "")))
(lsp-register-client
 (make-lsp-client
  :new-connection (lsp-stdio-connection
                   (lambda () (append (json-read-from-string (getenv "TOKENLINE_SERVER_CMD")) nil)))
  :activation-fn (lsp-activate-on "markdown" "plaintext")
  :server-id 'tokenline
  :add-on? t
  :semantic-tokens-faces-overrides
  '(:types (("tokenlineA" . font-lock-keyword-face)
            ("tokenlineB" . font-lock-string-face)))
  :notification-handlers
  (ht ("tokenline/status"
       (lambda (_workspace params)
         (push params tokenline-test-statuses)
         (let ((buf (find-buffer-visiting (lsp--uri-to-path (gethash "uri" params)))))
           (when buf
             (with-current-buffer buf
               (setq tokenline-status
                     (format "%d/%d tok" (gethash "tokens" params)
                             (gethash "contextWindow" params)))))))))
  :initialized-fn
  (lambda (workspace)
    (with-lsp-workspace workspace
      (lsp--set-configuration (lsp-configuration-section "tokenline"))))))
;; ------------------------------------------------------------------------------------------

(defun tokenline-test-finish (ok err)
  (puthash "ok" (if ok t :json-false) tokenline-test-record)
  (puthash "error" (or err "") tokenline-test-record)
  (with-temp-file (getenv "TOKENLINE_EMACS_OUT")
    (insert (json-encode tokenline-test-record)))
  (kill-emacs (if ok 0 1)))

(defun tokenline-test-wait (what pred &optional seconds)
  (let ((deadline (+ (float-time) (or seconds 60))))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall pred)
      (tokenline-test-finish nil (format "timed out waiting for %s" what)))))

;; The status of a version under the configuration above: the server pulls the configuration
;; when initialized, and a didOpen it reads before the answer is counted under the defaults
;; first, then published again once the configuration applies.
(defun tokenline-test-status-of (version)
  (seq-find (lambda (s) (and (equal (gethash "version" s) version)
                             (equal (gethash "contextWindow" s) 40)))
            tokenline-test-statuses))

(defun tokenline-test-snapshot (name)
  (let* ((version lsp--cur-version)
         (uri (lsp--buffer-uri)))
    (tokenline-test-wait (format "status of version %s" version)
                         (lambda () (tokenline-test-status-of version)))
    (let ((status (tokenline-test-status-of version)))
      (tokenline-test-wait
       "diagnostics"
       (lambda ()
         (let ((n (length (gethash (lsp--uri-to-path uri) (lsp-diagnostics t)))))
           (= n (if (>= (gethash "tokens" status) (* 0.5 (gethash "contextWindow" status))) 1 0)))))
      ;; Semantic tokens (full, then full/delta): ask, and wait for the answer for this version.
      (lsp--semantic-tokens-request nil t)
      (tokenline-test-wait "semantic tokens"
                           (lambda () (and lsp--semantic-tokens-cache
                                           (plist-get lsp--semantic-tokens-cache :_documentVersion)
                                           (= (plist-get lsp--semantic-tokens-cache :_documentVersion)
                                              version))))
      (let ((diags (mapcar (lambda (d)
                             (let ((r (lsp:diagnostic-range d)))
                               (list (cons "severity" (lsp:diagnostic-severity? d))
                                     (cons "message" (lsp:diagnostic-message d))
                                     (cons "line" (lsp:position-line (lsp:range-start r)))
                                     (cons "character" (lsp:position-character (lsp:range-start r))))))
                           (gethash (lsp--uri-to-path uri) (lsp-diagnostics t)))))
        (puthash name
                 (list (cons "version" version)
                       (cons "text" (buffer-substring-no-properties (point-min) (point-max)))
                       (cons "status" status)
                       (cons "diagnostics" (vconcat diags))
                       (cons "semantic" (lsp-get (plist-get lsp--semantic-tokens-cache :response) :data))
                       (cons "modeline" tokenline-status))
                 tokenline-test-record)))))

(condition-case err
    (let* ((root (file-name-as-directory (getenv "TOKENLINE_EMACS_ROOT")))
           (file (expand-file-name "prompt.md" root)))
      (with-temp-file file
        (insert "# Prompt\nSummarize the story in three sentences. \U0001F9FF\n中文 text.\n"))
      (lsp-workspace-folders-add root)
      (find-file file)
      (markdown-mode)
      (lsp)
      (tokenline-test-wait "the server" (lambda () (lsp-workspaces)))
      (tokenline-test-snapshot "open")
      (goto-char (point-max))
      (insert "Another line with many more words so that the window of forty is passed.\n")
      (tokenline-test-snapshot "edited")
      (tokenline-test-finish t nil))
  (error (tokenline-test-finish nil (format "%S" err))))
