"""Every refusal sentence with a stable code, in English (the `detail` API clients have always read: keep
these texts as they are) and Brazilian Portuguese (the app's tone: frontend/src/i18n/pt.json). `{name}`
is filled from the refusal's params; a code, once shipped, keeps its meaning."""

MESSAGES: dict[str, dict[str, str]] = {
    # Passwords: sign-up, join with a new account, change, reset (core/accounts/passwords.py)
    "password.too_short": {
        "en": "The password is too short: use at least {min_length} characters.",
        "pt": "A senha é curta demais: use pelo menos {min_length} caracteres.",
    },
    "password.too_long": {
        "en": "The password is too long: use at most {max_length} characters.",
        "pt": "A senha é longa demais: use no máximo {max_length} caracteres.",
    },
    "password.too_common": {
        "en": "This password is too common: choose one that others are unlikely to use.",
        "pt": "Essa senha é comum demais: escolha uma que outras pessoas dificilmente usariam.",
    },
    "password.is_email": {
        "en": "The password must not be your email address.",
        "pt": "A senha não pode ser o seu endereço de e-mail.",
    },
    "password.wrong_current": {
        "en": "Wrong current password.",
        "pt": "A senha atual está incorreta.",
    },
    "password.current_needed": {
        "en": "Give your current password to change it.",
        "pt": "Informe a sua senha atual para trocá-la.",
    },
    "password.fresh_proof_needed": {
        "en": "Sign in again with your school account (or use a reset link) to set a first password.",
        "pt": "Entre de novo com o login da escola (ou use um link de redefinição) para definir a primeira"
        " senha.",
    },
    "password.too_many_wrong": {
        "en": "Too many wrong passwords; wait before trying again.",
        "pt": "Senhas erradas demais; espere um pouco antes de tentar de novo.",
    },
    # Sign-in and sign-up (backend/accounts)
    "signin.wrong_credentials": {
        "en": "Wrong email or password.",
        "pt": "E-mail ou senha incorretos.",
    },
    "signin.too_many_failures": {
        "en": "Too many failed sign-ins; wait before trying again.",
        "pt": "Tentativas de entrar sem sucesso demais; espere um pouco antes de tentar de novo.",
    },
    "signin.session_ended": {
        "en": "Your session has ended: sign in again.",
        "pt": "A sua sessão terminou: entre de novo.",
    },
    "signin.not_signed_in": {
        "en": "Not signed in: sign in to the app, or send 'Authorization: Bearer <key>'.",
        "pt": "Você não entrou: entre no app ou envie 'Authorization: Bearer <chave>'.",
    },
    "signin.too_many_bad_keys": {
        "en": "Too many failed authentications from this address; retry later.",
        "pt": "Autenticações com falha demais a partir deste endereço; tente de novo mais tarde.",
    },
    "signup.off": {
        "en": "Self-service sign-up is off: ask your teacher for an invitation code.",
        "pt": "Este servidor não aceita cadastros: peça ao professor um código de convite.",
    },
    "account.email_taken": {
        "en": "An account with this email already exists: sign in instead.",
        "pt": "Já existe uma conta com este e-mail: entre com ela.",
    },
    "account.disabled": {
        "en": "This account is disabled: ask an administrator.",
        "pt": "Esta conta está desativada: fale com um administrador.",
    },
    "reset.link_gone": {
        "en": "This reset link is no longer valid: ask for a new one.",
        "pt": "Este link de redefinição não vale mais: peça um novo.",
    },
    # Joining a class with a code (backend/accounts/service/codes.py, budgets.py)
    "join.no_such_invitation": {
        "en": "No such invitation, or it has expired.",
        "pt": "Este convite não existe ou já expirou.",
    },
    "join.used_up": {
        "en": "This invitation has been used as many times as it allows: ask for a new one.",
        "pt": "Este convite já foi usado todas as vezes que permite: a turma está completa. Peça um novo"
        " ao professor.",
    },
    "join.email_taken": {
        "en": "An account with this email exists: sign in, then join with the code.",
        "pt": "Já existe uma conta com este e-mail: entre com ela e depois use o código.",
    },
    "join.too_many_codes": {
        "en": "Too many wrong invitation codes from this address; retry later.",
        "pt": "Códigos de convite errados demais a partir deste endereço; tente de novo mais tarde.",
    },
    # A project's doors (backend/deps.py)
    "project.not_found": {
        "en": "Project not found.",
        "pt": "Projeto não encontrado.",
    },
    "project.viewers_cannot_change": {
        "en": "Viewers cannot change this project.",
        "pt": "Leitores não podem alterar este projeto.",
    },
    "project.owner_only": {
        "en": "Only the project's owner can do this.",
        "pt": "Só o dono do projeto pode fazer isso.",
    },
    # Uploads (backend/documents, backend/middleware/body_limit.py)
    "upload.too_large": {
        "en": "The file is larger than the limit of {limit}.",
        "pt": "O arquivo passa do limite de {limit}.",
    },
    "upload.course_too_large": {
        "en": "The course upload is larger than the limit of {limit}; send it in parts.",
        "pt": "O envio do curso passa do limite de {limit}; envie em partes.",
    },
    "upload.body_too_large": {
        "en": "The request body is larger than the limit of {limit}.",
        "pt": "O corpo da requisição passa do limite de {limit}.",
    },
    "upload.empty": {
        "en": "The file is empty; there is nothing to index.",
        "pt": "O arquivo está vazio; não há nada para indexar.",
    },
    # `detail`: core/text/filetypes.py's English sentence, which names what the content looks like.
    "upload.unsupported_type": {
        "en": "{detail}",
        "pt": "Este arquivo não é de um tipo que o studyAI lê. Tipos aceitos: PDF (páginas escaneadas"
        " também), PowerPoint (.pptx), Word (.docx), Excel (.xlsx), EPUB, páginas web (.html), Markdown,"
        " texto simples e imagens de páginas (PNG, JPEG, TIFF).",
    },
    "upload.project_storage_full": {
        "en": "The project's storage limit of {limit} would be passed ({stored} stored); delete old documents"
        " or ask the operator to raise PROJECT_MAX_BYTES.",
        "pt": "O limite de armazenamento do projeto, {limit}, seria ultrapassado ({stored} já guardados):"
        " apague documentos antigos ou peça ao administrador para aumentar PROJECT_MAX_BYTES.",
    },
    "upload.user_hourly_budget": {
        "en": "You uploaded {used} in the last hour; the limit is {limit} per hour. Retry later.",
        "pt": "Você enviou {used} na última hora; o limite é {limit} por hora. Tente de novo mais tarde.",
    },
    "upload.project_hourly_budget": {
        "en": "This project received {used} in the last hour; the limit is {limit} per hour. Retry later.",
        "pt": "Este projeto recebeu {used} na última hora; o limite é {limit} por hora. Tente de novo mais"
        " tarde.",
    },
    "upload.too_many_pending": {
        "en": "{pending:,} documents of this project are still waiting to be indexed (at most {limit:,})."
        " Retry later.",
        "pt": "{pending} documentos deste projeto ainda esperam para ser indexados (no máximo {limit})."
        " Tente de novo mais tarde.",
    },
    "upload.disk_full": {
        "en": "The server is out of disk space, so the file was not stored; ask the administrator to free"
        " space, then upload it again. ({reason})",
        "pt": "O servidor ficou sem espaço em disco, e o arquivo não foi guardado; peça ao administrador"
        " para liberar espaço e envie de novo. ({reason})",
    },
    # Asking: the chat model's queue and rate limits (backend/middleware)
    "qa.queue_full": {
        "en": "The chat model's queue is full ({waiting} waiting); retry in {retry_after} s.",
        "pt": "A fila do modelo está cheia ({waiting} esperando); tente de novo em {retry_after} s.",
    },
    "qa.model_timeout": {
        "en": "The chat model did not answer in time; try again shortly.",
        "pt": "O modelo não respondeu a tempo; tente de novo daqui a pouco.",
    },
    "qa.model_unreachable": {
        "en": "The chat model is unreachable (its server is down or restarting); try again shortly.",
        "pt": "O modelo está fora do ar (o servidor dele caiu ou está reiniciando); tente de novo daqui a"
        " pouco.",
    },
    "qa.model_restarting": {
        "en": "The chat model is restarting ({reason}); retry shortly.",
        "pt": "O modelo está reiniciando ({reason}); tente de novo daqui a pouco.",
    },
    "qa.queue_unreachable": {
        "en": "The request queue (Redis) is unavailable; try again shortly.",
        "pt": "A fila de pedidos (Redis) está fora do ar; tente de novo daqui a pouco.",
    },
    "attempts.limit_reached": {
        "en": "You have used all {limit} attempts at this question allowed in this project.",
        "pt": "Você já usou as {limit} tentativas que este projeto permite nesta questão.",
    },
    "rate.user_limited": {
        "en": "Rate limit reached for this kind of request; retry later.",
        "pt": "Você fez pedidos demais deste tipo em pouco tempo; tente de novo mais tarde.",
    },
    "rate.address_limited": {
        "en": "Too many requests from this address; retry after the Retry-After seconds.",
        "pt": "Pedidos demais a partir deste endereço; espere um pouco e tente de novo.",
    },
}
