-- Headless Neovim 0.11 drives the Tokenline language server through vim.lsp: opens a Markdown
-- buffer, edits it (incremental didChange), and records what the editor received: the
-- tokenline/status notifications, the diagnostics and the semantic tokens at every position of
-- the buffer. The pytest module checks the record against sentencepiece.
--
--   TOKENLINE_SERVER_CMD='["python","-m","tokenline","serve"]' TOKENLINE_NVIM_OUT=out.json \
--     TOKENLINE_NVIM_ROOT=/some/dir nvim --headless --clean -l tests/nvim/tokenline_test.lua
--
-- This is also the configuration docs/editors.md shows for Neovim.

local cmd = vim.json.decode(os.getenv("TOKENLINE_SERVER_CMD"))
local out_path = os.getenv("TOKENLINE_NVIM_OUT")
local root = os.getenv("TOKENLINE_NVIM_ROOT")
local timeout = tonumber(os.getenv("TOKENLINE_NVIM_TIMEOUT") or "60000")

local record = { statuses = {}, steps = {} }

local function finish(ok, err)
  record.ok = ok
  record.error = err
  local f = assert(io.open(out_path, "w"))
  f:write(vim.json.encode(record))
  f:close()
  vim.cmd(ok and "qa!" or "cquit! 1")
end

local function wait(what, pred)
  if not vim.wait(timeout, pred, 20) then
    finish(false, "timed out waiting for " .. what)
  end
end

local ok, err = pcall(function()
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_name(buf, root .. "/prompt.md")
  vim.bo[buf].filetype = "markdown"
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, {
    "# Prompt",
    "Summarize the story in three sentences. 🧿",
    "中文 text, then more text.",
  })

  local client_id = vim.lsp.start({
    name = "tokenline",
    cmd = cmd,
    root_dir = root,
    init_options = { contextWindow = 40, warnAt = 0.5 },
    settings = { tokenline = { contextWindow = 40, warnAt = 0.5 } },
    handlers = {
      ["tokenline/status"] = function(_, result)
        table.insert(record.statuses, result)
      end,
    },
  }, { bufnr = buf })
  assert(client_id, "vim.lsp.start failed")
  local client = vim.lsp.get_client_by_id(client_id)
  wait("initialization", function() return client.initialized end)
  record.encoding = client.offset_encoding

  local function last_status_for(version)
    for i = #record.statuses, 1, -1 do
      local s = record.statuses[i]
      if s.version == version then return s end
    end
  end

  local function snapshot(name)
    local version = vim.lsp.util.buf_versions[buf]
    wait("tokenline/status of version " .. version, function() return last_status_for(version) end)
    -- Semantic tokens are requested by Neovim after changes (debounced): wait until they
    -- cover the whole current text.
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    local function tokens()
      local seen, list = {}, {}
      for row, line in ipairs(lines) do
        for col = 0, #line - 1 do
          for _, t in ipairs(vim.lsp.semantic_tokens.get_at_pos(buf, row - 1, col) or {}) do
            local key = t.line .. ":" .. t.start_col .. ":" .. t.end_col
            if not seen[key] then
              seen[key] = true
              table.insert(list, {
                line = t.line, start_col = t.start_col, end_col = t.end_col, type = t.type,
                modifiers = vim.tbl_keys(t.modifiers or {}),
              })
            end
          end
        end
      end
      return list
    end
    local list
    wait("semantic tokens of version " .. version, function()
      list = tokens()
      local covered = 0
      for _, t in ipairs(list) do covered = covered + (t.end_col - t.start_col) end
      local want = 0
      for _, line in ipairs(lines) do want = want + #line end
      return covered == want
    end)
    table.sort(list, function(a, b)
      return a.line < b.line or (a.line == b.line and a.start_col < b.start_col)
    end)
    -- Diagnostics are handled by Neovim a little after the status: wait for as many as the
    -- status implies (one above warnAt x window, none below); their content is checked later.
    local st = last_status_for(version)
    local expect = st.tokens >= 0.5 * st.contextWindow and 1 or 0
    wait("diagnostics of version " .. version, function()
      return #vim.diagnostic.get(buf) == expect
    end)
    local diags = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      table.insert(diags, {
        lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
        severity = d.severity, message = d.message,
      })
    end
    table.insert(record.steps, {
      name = name, version = version, status = last_status_for(version),
      -- Neovim sends the buffer with its final line break (the eol option).
      text = table.concat(lines, "\n") .. "\n", semantic = list, diagnostics = diags,
    })
  end

  snapshot("open")
  -- Typing in the middle of line 2 and adding a line: incremental changes.
  vim.api.nvim_buf_set_text(buf, 1, 9, 1, 9, { " the whole" })
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "Another line with 😀 and more words to pass the window." })
  snapshot("edited")
  -- Deleting most of it: below the warning again.
  vim.api.nvim_buf_set_lines(buf, 1, -1, false, {})
  snapshot("shortened")
  -- The diagnostics of the last step must be gone.
  wait("diagnostics cleared", function() return #vim.diagnostic.get(buf) == 0 end)
end)

if ok then
  finish(true, nil)
else
  finish(false, tostring(err))
end
