@echo off
rem buildguard-gradle.cmd - run a Gradle build under buildguard: one finite build, or a
rem continuous build (-t, --continuous) guarded cycle by cycle.
rem Windows twin of the POSIX shim buildguard-gradle; same options, same refusals.
rem
rem Usage: buildguard-gradle [OPTIONS] [--] GRADLE_ARG...
rem
rem Limits of cmd.exe that the POSIX shim does not have: quote every argument that
rem contains spaces or any of  & | < > ^ ( )  and do not use "!" in arguments.
setlocal EnableExtensions DisableDelayedExpansion
set "BG_PROG=buildguard-gradle"
set "BG_TOOLNAME=gradle"
set "BG_TOOLNAMES=gradle.bat gradle.cmd gradle.exe"
set "BG_TOOLTITLE=Gradle"
set "BG_WRAPPER=gradlew.bat"
set "BG_ALL=" & set BG_ALL=%*
set "BG_CONT="

if "%~1"=="--help" goto :help
if "%~1"=="-h" goto :help
if "%~1"=="/?" goto :help

rem -- Shim options, read from %1 %2 ... BG_SKIP counts the tokens they use in %*
rem    (cmd splits --port=4000 into two tokens, so that form works too).
set "BG_OPTS="
set /a BG_SKIP=0
:opts
if "%~1"=="--" (set /a BG_SKIP+=1 & goto :optsdone)
if "%~1"=="--help" goto :help
if "%~1"=="-h" goto :help
for %%o in (--port --port-file --owner --timeout-ms --grace --transcript) do if "%~1"=="%%o" goto :optvalue
goto :optsdone
:optvalue
if "%~2"=="" (
    echo %BG_PROG%: option %~1 needs a value 1>&2
    call :usage
    exit /b 2
)
set BG_OPTS=%BG_OPTS% "%~1" "%~2"
set /a BG_SKIP+=2
shift
shift
goto :opts
:optsdone

rem -- The tool arguments: %* without the first BG_SKIP tokens.
set "BG_REST="
if %BG_SKIP%==0 (
    set BG_REST=%*
) else (
    call :droptokens
)
if not defined BG_REST (
    echo %BG_PROG%: name the Gradle tasks to run, for example: %BG_PROG% classes 1>&2
    call :usage
    exit /b 2
)

rem -- Refusals.
if defined BUILDGUARD_SAFE_BUILD_ACTIVE (
    echo %BG_PROG%: refused: nested buildguard safe build ^(BUILDGUARD_SAFE_BUILD_ACTIVE is set^); run ordinary Gradle tasks inside a safe build 1>&2
    exit /b 2
)
for %%a in (%BG_REST%) do call :refuse "%%~a" || exit /b 2

rem -- The build tool: .\gradlew.bat, else gradle on PATH (only runnable names:
rem    a Gradle distribution's bin also holds the POSIX script "gradle").
set "BG_TOOL="
if exist "%CD%\%BG_WRAPPER%" set "BG_TOOL=.\%BG_WRAPPER%"
for %%n in (%BG_TOOLNAMES%) do if not defined BG_TOOL for /f "delims=" %%p in ('where %%n 2^>nul') do if not defined BG_TOOL set "BG_TOOL=%%p"
if defined BG_TOOL goto :havetool
>&2 echo %BG_PROG%: no .\%BG_WRAPPER% in %CD% and no %BG_TOOLNAME% on PATH; install %BG_TOOLTITLE% or run from the project root
exit /b 127
:havetool

rem -- The wrapper: %BUILDGUARD%, else buildguard.exe next to this script, else on PATH.
set "BG_EXE=%BUILDGUARD%"
if not defined BG_EXE if exist "%~dp0buildguard.exe" set "BG_EXE=%~dp0buildguard.exe"
if not defined BG_EXE for /f "delims=" %%p in ('where buildguard.exe 2^>nul') do if not defined BG_EXE set "BG_EXE=%%p"
if defined BG_EXE goto :haveexe
>&2 echo %BG_PROG%: buildguard not found next to this script or on PATH; install it or set BUILDGUARD=C:\path\to\buildguard.exe
exit /b 127
:haveexe

set "BUILDGUARD_SAFE_BUILD_ACTIVE=1"
rem A continuous build (-t, --continuous) runs as buildguard --continuous: each cycle is one guarded build.
"%BG_EXE%" %BG_CONT% %BG_OPTS% -- "%BG_TOOL%" %BG_REST%
exit /b %ERRORLEVEL%

rem ---------------------------------------------------------------------------
:refuse
rem Exit 1 (after the message) when %1 is a long-running build; -t, --continuous and -continuous
rem set BG_CONT (buildguard refuses Gradle's other spellings of them, naming the flag).
set "BG_A=%~1"
if "%BG_A%"=="-t" set "BG_CONT=--continuous"
if "%BG_A%"=="--continuous" set "BG_CONT=--continuous"
if "%BG_A%"=="-continuous" set "BG_CONT=--continuous"
if "%BG_A%"=="bootRun" goto :refuselong
if "%BG_A:~-8%"==":bootRun" goto :refuselong
exit /b 0
:refuselong
echo %BG_PROG%: refused: %BG_A% runs the application until it is stopped; start it separately and build with a finite task such as 'classes' 1>&2
exit /b 1

:droptokens
rem Sets BG_REST to BG_ALL without its first BG_SKIP tokens, splitting the way cmd
rem splits %%1..%%9: runs of space, tab, comma, semicolon or = outside double quotes.
setlocal EnableDelayedExpansion
set "s=!BG_ALL!"
set /a i=0, tokens=0, inquote=0, intoken=0
:droploop
set "c=!s:~%i%,1!"
if not defined c (
    endlocal
    set "BG_REST="
    exit /b 0
)
set "nq=!c:"=!"
set /a delim=0
if !inquote!==0 if defined nq (
    if "!c!"==" " set /a delim=1
    if "!c!"=="	" set /a delim=1
    if "!c!"=="," set /a delim=1
    if "!c!"==";" set /a delim=1
    if "!c!"=="=" set /a delim=1
)
if !delim!==1 (
    if !intoken!==1 set /a tokens+=1, intoken=0
) else (
    if !tokens! geq %BG_SKIP% goto :dropdone
    set /a intoken=1
    if not defined nq set /a "inquote=1-inquote"
)
set /a i+=1
goto :droploop
:dropdone
rem i is the first character of the first kept token.
for /f "delims=" %%r in ("!s:~%i%!") do (
    endlocal
    set "BG_REST=%%r"
)
exit /b 0

:help
call :usage
exit /b 0

:usage
>&2 echo usage: buildguard-gradle [OPTIONS] [--] GRADLE_ARG...
>&2 echo.
>&2 echo Runs .\gradlew.bat (or gradle on PATH when there is no .\gradlew.bat) under buildguard,
>&2 echo which holds the Reclazz agent's reloads until the build has finished with exit 0.
>&2 echo.
>&2 echo Options (before the Gradle arguments; passed to buildguard unchanged):
>&2 echo   --port N              agent port
>&2 echo   --port-file PATH      file holding the agent port
>&2 echo                         (default: .\.reclazz\agent.port, then .\.idea\reclazz\agent.port)
>&2 echo   --owner TOKEN         build owner; reuse the owner of a failed build to recover it
>&2 echo   --timeout-ms N        limit for each agent acknowledgement (buildguard default 5000)
>&2 echo   --grace DURATION      how long an interrupted build may take to stop (buildguard default 10s)
>&2 echo   --transcript FILE     also write the build's output to FILE
>&2 echo   --                    end of options; everything after it goes to Gradle
>&2 echo   -h, --help            show this help
>&2 echo.
>&2 echo Continuous builds (-t, --continuous) run as buildguard --continuous: every cycle
>&2 echo is one guarded build, and a failed cycle's output stays held until a cycle succeeds.
>&2 echo.
>&2 echo Refused (exit 2): bootRun, which runs the application until it is stopped,
>&2 echo and running inside another safe build (BUILDGUARD_SAFE_BUILD_ACTIVE is set).
>&2 echo.
>&2 echo Environment:
>&2 echo   BUILDGUARD            the buildguard binary (default: buildguard.exe next to this
>&2 echo                         script, else buildguard on PATH)
>&2 echo.
>&2 echo Examples: buildguard-gradle --owner alice-1 -- classes --offline
>&2 echo           buildguard-gradle --continuous classes
exit /b 0
