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
    # A project's settings and members (backend/projects)
    "project.teachers_create": {
        "en": "Only teachers and administrators can create projects on this server.",
        "pt": "Neste servidor, só professores e administradores podem criar projetos.",
    },
    "project.sample_rate_too_high": {
        "en": "groundedness_sample_rate may be at most {max} (the server's GROUNDEDNESS_SAMPLE_RATE_MAX).",
        "pt": "groundedness_sample_rate pode ser no máximo {max} (o GROUNDEDNESS_SAMPLE_RATE_MAX do"
        " servidor).",
    },
    "project.owner_sets_attempt_limits": {
        "en": "Only the project's owner can change attempt limits.",
        "pt": "Só o dono do projeto pode mudar o limite de tentativas.",
    },
    "project.owner_sets_own_items": {
        "en": "Only the project's owner decides whether members study their own items.",
        "pt": "Só o dono do projeto decide se os membros estudam os próprios itens.",
    },
    "project.owner_sets_exam_date": {
        "en": "Only the project's owner sets the exam date.",
        "pt": "Só o dono do projeto define a data da prova.",
    },
    "member.not_found": {
        "en": "Member not found.",
        "pt": "Membro não encontrado.",
    },
    "member.last_owner": {
        "en": "A project keeps at least one owner: make another member owner first.",
        "pt": "Um projeto precisa ter pelo menos um dono: torne outro membro dono antes.",
    },
    # Documents, their versions and course uploads (backend/documents)
    "document.not_found": {
        "en": "Document not found.",
        "pt": "Documento não encontrado.",
    },
    "document.version_file_field": {
        "en": "Send the new version as a multipart field named 'file'.",
        "pt": "Envie a nova versão como um campo multipart chamado 'file'.",
    },
    "document.nothing_to_change": {
        "en": "Send new 'content', a new 'title', or a multipart 'file'.",
        "pt": "Envie um novo 'content', um novo 'title' ou um 'file' multipart.",
    },
    "document.not_text": {
        "en": "This document is not Markdown or text: send the new version as a file.",
        "pt": "Este documento não é Markdown nem texto: envie a nova versão como arquivo.",
    },
    "document.content_too_large": {
        "en": "The new content is larger than the upload limit.",
        "pt": "O novo conteúdo passa do limite de envio.",
    },
    "batch.not_found": {
        "en": "Upload batch not found.",
        "pt": "Envio do curso não encontrado.",
    },
    "batch.files_field": {
        "en": "Send the course's files as multipart fields named 'files'.",
        "pt": "Envie os arquivos do curso como campos multipart chamados 'files'.",
    },
    "job.not_found": {
        "en": "Job not found.",
        "pt": "Tarefa não encontrada.",
    },
    # A cited version and its pages (backend/documents/cited_spot.py, versions.py, page_highlight.py)
    "version.not_found": {
        "en": "Document version not found.",
        "pt": "Versão do documento não encontrada.",
    },
    "version.bad_range": {
        "en": "Send char_start ≤ char_end, or neither.",
        "pt": "Envie char_start ≤ char_end, ou nenhum dos dois.",
    },
    # `reason`: the parser's own English sentence.
    "version.unreadable": {
        "en": "This version could not be read again: {reason}",
        "pt": "Não foi possível ler esta versão de novo: {reason}",
    },
    "version.shown_as_text": {
        "en": "This version is shown as text, not by pages: its passage is marked in the text.",
        "pt": "Esta versão é mostrada como texto, não por páginas: o trecho está marcado no texto.",
    },
    # `reason`: the page reader's (text layer or OCR) own English sentence.
    "version.page_unreadable": {
        "en": "This page could not be read: {reason}",
        "pt": "Não foi possível ler esta página: {reason}",
    },
    "version.not_a_deck": {
        "en": "Only a slide deck (.pptx) is laid out by slides.",
        "pt": "Só uma apresentação de slides (.pptx) é desenhada por slides.",
    },
    "version.slide_unreadable": {
        "en": "This slide could not be laid out: {reason}",
        "pt": "Não foi possível desenhar este slide: {reason}",
    },
    # Plans and notes (backend/plans, backend/questions/exports.py)
    "plan.not_found": {
        "en": "Plan not found.",
        "pt": "Plano não encontrado.",
    },
    "note.job_not_found": {
        "en": "Note job not found.",
        "pt": "Tarefa da nota não encontrada.",
    },
    "note.queue_unavailable": {
        "en": "The job queue is unavailable, so the note could not be started; try again later.",
        "pt": "A fila de tarefas está fora do ar, então a nota não pôde ser iniciada; tente de novo mais"
        " tarde.",
    },
    # `status`: the note job's status word (queued, running, failed).
    "note.not_written": {
        "en": "The note is not written yet ({status}).",
        "pt": "A nota ainda não foi escrita ({status}).",
    },
    "note.document_deleted": {
        "en": "The note's document was deleted.",
        "pt": "O documento da nota foi excluído.",
    },
    # Study items: generation, curation, attempts, the study queue (backend/questions, backend/study,
    # agents/runs)
    "question.not_found": {
        "en": "Question not found.",
        "pt": "Questão não encontrada.",
    },
    "question.generate_editors_only": {
        "en": "Only editors and owners generate items in this project.",
        "pt": "Neste projeto, só editores e donos geram itens.",
    },
    "question.no_material": {
        "en": "No indexed material to generate questions from: upload documents and wait until they are"
        " indexed, or check the document and section.",
        "pt": "Não há material indexado para gerar questões: envie documentos e espere até que sejam"
        " indexados, ou confira o documento e a seção.",
    },
    "question.nothing_to_change": {
        "en": "Nothing to change: give status, question, answer, distractors, explanation or difficulty.",
        "pt": "Nada para alterar: informe o status, a pergunta, a resposta, os distratores, a explicação ou"
        " a dificuldade.",
    },
    # `type`: the item's type as the API names it (short_answer, application, flashcard).
    "question.no_distractors": {
        "en": "A {type} item has no distractors.",
        "pt": "Um item do tipo {type} não tem distratores.",
    },
    "question.distractors_needed": {
        "en": "A multiple-choice item needs 3 distinct distractors unlike the answer.",
        "pt": "Um item de múltipla escolha precisa de 3 distratores diferentes entre si e da resposta.",
    },
    "question.flashcard_repeats": {
        "en": "A flashcard's back must not repeat its front.",
        "pt": "O verso de um flashcard não pode repetir a frente.",
    },
    "study.not_in_queue": {
        "en": "Question not found, or not in your study queue.",
        "pt": "Questão não encontrada ou fora da sua fila de estudo.",
    },
    "attempts.not_found": {
        "en": "Attempt not found.",
        "pt": "Tentativa não encontrada.",
    },
    # `status`: the grade's status word (settled, confirmed, corrected).
    "attempts.not_provisional": {
        "en": "This attempt's grade is {status}: only a provisional grade is reviewed.",
        "pt": "A nota desta tentativa não é mais provisória ({status}): só uma nota provisória é revisada.",
    },
    "attempts.others_owner_only": {
        "en": "Only the project's owner can read others' attempts.",
        "pt": "Só o dono do projeto pode ver as tentativas de outras pessoas.",
    },
    # Audio overviews (backend/audio)
    "audio.not_found": {
        "en": "Audio overview not found.",
        "pt": "Resumo em áudio não encontrado.",
    },
    # `language`: the language's English name (core/speech/voices.py, NoVoice's sentence).
    "audio.no_voice": {
        "en": "No voice is installed for {language}: an audio overview needs one (`make audio-voices`"
        " installs espeak-ng; README, Audio overviews).",
        "pt": "Nenhuma voz está instalada para o idioma deste resumo em áudio, e ele precisa de uma (`make"
        " audio-voices` instala o espeak-ng; README, Audio overviews).",
    },
    "audio.queue_unavailable": {
        "en": "The job queue is unavailable, so the audio overview could not be started; try again later.",
        "pt": "A fila de tarefas está fora do ar, então o resumo em áudio não pôde ser iniciado; tente de"
        " novo mais tarde.",
    },
    # Search profiles and the question history (backend/qa, agents/runs/generation.py)
    # `reason`: core/retrieval's English sentence (an unknown profile, a filter the profile needs).
    "retrieval.profile_refused": {
        "en": "{reason}",
        "pt": "O perfil de busca não serve para este pedido ({reason}).",
    },
    "history.bad_period": {
        "en": "`since` must be before `until`.",
        "pt": "`since` precisa ser anterior a `until`.",
    },
    "history.unknown_agent": {
        "en": "`agent` must be one of {agents}.",
        "pt": "`agent` precisa ser um destes: {agents}.",
    },
}
